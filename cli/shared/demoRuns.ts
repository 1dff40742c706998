import { boardCall } from './boardCall.ts';

/**
 * `runledger daemon --demo` (what `npm start` runs): a few turns over three conversations, so a new
 * user watches a lane's second turn wait for its first, other lanes go ahead meanwhile, and every
 * turn complete.
 */
const DEMO: readonly { lane: string; prompt: string }[] = [
  { lane: 'alice', prompt: 'Summarise the open pull requests.' },
  { lane: 'alice', prompt: 'Now draft a reply to the oldest one.' },
  { lane: 'bob', prompt: 'What changed in the release notes?' },
  { lane: 'carol', prompt: 'List the flaky tests of last week.' },
];

export async function submitDemoRuns(server: string, db: string, log: (line: string) => void): Promise<void> {
  for (const run of DEMO) {
    const { status } = await boardCall({ server, db }, 'POST', '/v1/runs', run);
    if (status !== 201) log(`demo: submit failed with ${status}`);
  }
  log(
    `demo: submitted ${DEMO.length} runs; try \`npx runledger submit --lane alice --prompt "and then?"\`, \`npx runledger status\`, \`npx runledger audit <run id>\``,
  );
}
