import { readSubmitToken } from '../../adapters/http/tokens.ts';

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
  const token = readSubmitToken(db);
  for (const run of DEMO) {
    const response = await fetch(`${server}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(run),
    });
    if (response.status !== 201) log(`demo: submit failed with ${response.status}`);
  }
  log(
    `demo: submitted ${DEMO.length} runs; try \`npx runledger submit --lane alice --prompt "and then?"\`, \`npx runledger status\`, \`npx runledger audit <run id>\``,
  );
}
