import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedDocs, ROOT } from './docs/references.ts';

// `npm run docs`: writes the references generated from the code (docs/cli.md, docs/events.md).
for (const doc of generatedDocs()) {
  writeFileSync(join(ROOT, doc.path), doc.text);
  process.stdout.write(`wrote ${doc.path}\n`);
}
