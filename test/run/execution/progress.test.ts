import { describe, expect, it } from 'vitest';
import { PROGRESS_CHARS, progressLine } from '../../../adapters/agent/activity.ts';
import { claudeStreamJsonReader, codexJsonReader, plainReader } from '../../../adapters/agent/outputReaders.ts';

const json = (event: unknown): string => `${JSON.stringify(event)}\n`;
const assistant = (...content: unknown[]) => json({ type: 'assistant', session_id: 's1', message: { role: 'assistant', content } });

/** The heartbeat's `progress` (docs/rules.md#wire-and-cli): what the agent is doing, from its own stream, one short line. */
describe('progress: the agent’s latest tool call or message', () => {
  it('Claude: a tool_use names the tool and what it acts on; a text message is what it says; each change is told once', () => {
    const reader = claudeStreamJsonReader();
    const heard: string[] = [];
    reader.onProgress((line) => heard.push(line));
    reader.push(json({ type: 'system', subtype: 'init', session_id: 's1' }));
    expect(reader.progress()).toBeNull();
    reader.push(assistant({ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test', description: 'run the tests' } }));
    reader.push(assistant({ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test' } }));
    reader.push(assistant({ type: 'text', text: 'Let me read it.' }, { type: 'tool_use', id: 't2', name: 'Read', input: { file_path: '/w/a.ts' } }));
    reader.push(assistant({ type: 'tool_use', id: 't3', name: 'TodoWrite', input: { todos: [] } }));
    reader.push(assistant({ type: 'text', text: 'All green.\nDone.' }));
    reader.end();
    expect(heard).toEqual(['Bash: npm test', 'Read: /w/a.ts', 'TodoWrite', 'says: All green. Done.']);
    expect(reader.progress()).toBe('says: All green. Done.');
  });

  it('Codex: a command as it starts and as it ends, file changes, tool calls and messages; reasoning says nothing', () => {
    const reader = codexJsonReader();
    const heard: string[] = [];
    reader.onProgress((line) => heard.push(line));
    const item = (type: 'item.started' | 'item.completed', it: Record<string, unknown>) => reader.push(json({ type, item: it }));
    item('item.completed', { id: 'r', type: 'reasoning', text: '**Thinking**' });
    item('item.started', { id: 'c', type: 'command_execution', command: "bash -lc 'ls'", exit_code: null, status: 'in_progress' });
    item('item.completed', { id: 'c', type: 'command_execution', command: "bash -lc 'ls'", exit_code: 2, status: 'failed' });
    item('item.completed', { id: 'f', type: 'file_change', changes: [{ path: 'a.ts', kind: 'update' }], status: 'completed' });
    item('item.started', { id: 'm', type: 'mcp_tool_call', server: 'docs', tool: 'search', status: 'in_progress' });
    item('item.completed', { id: 'a', type: 'agent_message', text: 'Fixed.' });
    reader.end();
    expect(heard).toEqual(["running: bash -lc 'ls'", "ran: bash -lc 'ls' (exit 2)", 'edited: a.ts', 'tool: docs.search', 'says: Fixed.']);
  });

  it('a plain command has no progress', () => {
    const reader = plainReader();
    reader.push('working...\n');
    expect(reader.progress()).toBeNull();
  });

  it('secrets are masked in the forms agents type them: keys by their known prefixes, a secret named before its value, a password in a URL or -u', () => {
    const masked = (text: string) => progressLine(`Bash: ${text}`).slice('Bash: '.length);
    expect(masked('stripe charges list --api-key sk_live_51HxYzAbCdEfGhIjKlMnOpQr')).toBe('stripe charges list --api-key ***');
    expect(masked('curl https://x/v1?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY')).toBe('curl https://x/v1?key=***');
    expect(masked('docker login -u me --password dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c')).toBe('docker login -u me --password ***');
    expect(masked('npm config set //registry.npmjs.org/:_authToken npm_AbCdEf0123456789xyzAbCdEf0123456789')).toBe(
      'npm config set //registry.npmjs.org/:_authToken ***',
    );
    expect(masked('aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')).toBe(
      'aws configure set aws_secret_access_key ***',
    );
    expect(masked('echo "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" >> creds')).toBe(
      'echo "aws_secret_access_key = ***" >> creds',
    );
    expect(masked('cat > .env <<< \'{"password": "hunter2secret", "user": "me"}\'')).toBe('cat > .env <<< \'{"password": ***, "user": "me"}\'');
    expect(masked('curl -u admin:hunter2secret https://x')).toBe('curl -u admin:*** https://x');
    expect(masked('curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"')).toBe(
      'curl -H "Authorization: Bearer ***"',
    );
    expect(masked('jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N')).toBe('jwt=***');
    // What is no secret stays as it was: the line must still say what the agent does.
    expect(masked('grep -rn password src/login.ts')).toBe('grep -rn password src/login.ts');
    expect(masked('Read: /w/src/tokens/tokenStore.ts')).toBe('Read: /w/src/tokens/tokenStore.ts');
  });

  it('a flood of long lines made of secret names costs the masks linear time, not a backtrack per character', () => {
    const started = performance.now();
    for (let i = 0; i < 50; i++) for (const text of ['token-'.repeat(400), 'a-'.repeat(1000), 'password '.repeat(300)]) progressLine(text);
    // Linear masks take a few ms for these 150 lines; a backtracking one took half a second a line.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('secrets are masked and the line is bounded, however long the command', () => {
    expect(progressLine('curl -H "Authorization: Bearer abcdefghijklmnop123" https://x')).toBe('curl -H "Authorization: Bearer ***" https://x');
    expect(progressLine('GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz git push')).toBe('GITHUB_TOKEN=*** git push');
    expect(progressLine('export OPENAI_API_KEY="sk-proj-abcdefghijklmnop"')).toBe('export OPENAI_API_KEY=***');
    expect(progressLine('run with sk-ant-api03-abcdefghijklmnop and AKIAABCDEFGHIJKLMNOP')).toBe('run with *** and ***');
    expect(progressLine('git clone https://me:hunter2secret@github.com/x/y')).toBe('git clone https://me:***@github.com/x/y');
    const long = progressLine(`echo ${'x'.repeat(10_000_000)}`);
    expect(long.length).toBe(PROGRESS_CHARS);
    expect(long.endsWith('…')).toBe(true);
    expect(progressLine('a\u0000b\u001b[31mc\nd')).toBe('a b [31mc d');
  });
});
