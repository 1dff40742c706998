import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedDocs, ROOT } from '../../scripts/docs/references.ts';

// The references in docs/ are generated from the code (the CLI's definitions, the event catalogue):
// a change of either without `npm run docs` leaves a document that says what the code no longer does.
describe('the generated references match the code (docs/cli.md, docs/events.md)', () => {
  for (const doc of generatedDocs()) {
    it(`${doc.path} is what \`npm run docs\` generates`, () => {
      let checkedIn = '';
      try {
        checkedIn = readFileSync(join(ROOT, doc.path), 'utf8');
      } catch {
        // Missing: reported below as a difference.
      }
      if (checkedIn !== doc.text) {
        expect.fail(`${doc.path} differs from what the code generates: run \`npm run docs\` and commit ${doc.path}`);
      }
    });
  }
});
