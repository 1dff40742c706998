/**
 * Issue 15: the help says what a user needs without the sources: the exit codes (0 ok, 1 a finding,
 * 2 a usage or environment error), an example for every command, and the id rule wherever an id is
 * taken. The README says where the contract is without pointing outside the clone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAFE_ID_RULE } from '../../events/idRule.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { repoRoot, runledger } from '../support/processes.ts';

const COMMANDS = [
  ['daemon'],
  ['server'],
  ['computer', 'add'],
  ['computer', 'list'],
  ['run'],
  ['doctor'],
  ['submit'],
  ['cancel'],
  ['status'],
  ['show'],
  ['runs'],
  ['lane'],
  ['audit'],
  ['replay'],
  ['rebuild'],
  ['tick'],
  ['adopt'],
  ['subscribe'],
  ['unsubscribe'],
];

/** The options and arguments that take an id (a lane, a computer, a session, a subscription, an agent login). */
const TAKING_AN_ID: [string[], string[]][] = [
  [['daemon'], ['--computer <id>']],
  [['computer', 'add'], ['id']],
  [['run'], ['--lane <lane>']],
  [['submit'], ['--lane <lane>', '--agent <id>']],
  [['runs'], ['--lane <lane>', '--computer <id>']],
  [['lane'], ['lane']],
  [['tick'], ['--computer <id>']],
  [['adopt'], ['lane', 'session']],
  [['subscribe'], ['session', '--lane <lane>', '--id <id>']],
  [['unsubscribe'], ['session', 'subscription']],
];

/** The help of one option or argument: its line and the lines that continue it. */
function helpOf(help: string, name: string): string {
  // Past the description: the lists of arguments and options.
  const lines = help.split('\n').slice(help.split('\n').findIndex((l) => /^(Arguments|Options):$/.test(l)));
  const start = lines.findIndex((l) => l.trimStart().startsWith(`${name} `));
  expect(start, `${name} in:\n${help}`).toBeGreaterThanOrEqual(0);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => /^\s{2}\S/.test(l) && !/^\s{10,}/.test(l));
  return [lines[start], ...rest.slice(0, end === -1 ? rest.length : end)].map((l) => l!.trim()).join(' ');
}

describe('the help', () => {
  it('runledger --help says the exit codes: 0 ok, 1 a finding, 2 a usage or environment error', () => {
    const help = runledger(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Exit codes: 0 ok; 1 a finding (replay or rebuild found a difference');
    expect(help.stdout).toContain('2 a usage or environment error');
  });

  // Each command's help in this process (the same program and dispatch); the whole program's through the real entry point above.
  it.each(COMMANDS)('runledger %s --help ends with an example and its exit codes', async (...command) => {
    const help = await runInProcess([...command, '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`\\nExamples?:\\n {2}\\$ runledger ${command.join(' ')}`));
    expect(help.stdout).toMatch(/\nExit: 0 ok; (1 [^;]+; )?2 a usage or environment error/);
  });

  it.each(TAKING_AN_ID)('runledger %j --help: the id rule beside each id it takes', async (command, names) => {
    const help = (await runInProcess([...command, '--help'])).stdout;
    for (const name of names) expect(helpOf(help, name)).toContain(SAFE_ID_RULE);
  });

  it('a usage error exits 2, as the help says, naming what was wrong', () => {
    const unknown = runledger(['status', '--no-such-option']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("error: unknown option '--no-such-option'");
    expect(runledger(['daemon', '--slots', 'x']).status).toBe(2);
  });
});

describe('the README', () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

  it('points at no file outside the clone', () => {
    expect(readme).not.toMatch(/\.\.\/shared\//);
  });

  it('says the budget sentence goes ahead of the prompt, and --budget-note off', () => {
    expect(readme).toContain('--budget-note off');
  });
});
