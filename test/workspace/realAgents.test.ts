/**
 * The real Claude Code and Codex CLIs, as users type them, working in their lane's worktree of a
 * repository (README "Workspaces in a repository"): the daemon runs each, the agent's own file tool
 * writes a file the stand-in model asked for, the turn's changes are on the record, and the next
 * turn resumes the conversation in the same worktree. Codex runs without `--skip-git-repo-check`: a
 * worktree is a git repository to it. The models are stand-ins on 127.0.0.1
 * (test/fixtures/agents/modelApis.ts); everything else is the real thing.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, readLog, startBoard } from '../e2e/support/cluster.ts';
import { type ModelApis, startModelApis } from '../fixtures/agents/modelApis.ts';
import { realAgentBin } from '../fixtures/agents/realAgents.ts';
import { tempDir } from '../support/tempStore.ts';
import { GIT_IDENTITY, git, makeRepo, turn } from './support.ts';

let apis: ModelApis;
beforeAll(async () => {
  apis = await startModelApis();
});
afterAll(() => apis.close());

// What a team would type: Claude Code may edit files in its folder, Codex may write in its workspace.
const cases = [
  { agent: 'claude', exec: 'claude --permission-mode acceptEdits', api: 'anthropic', skills: '.claude/skills' },
  { agent: 'codex', exec: 'codex --sandbox workspace-write', api: 'openai', skills: '.codex/skills' },
] as const;

describe('the real agent CLIs in a lane’s worktree', () => {
  it.each(cases)(
    '--exec $exec: sees the lane’s skill and writes a file in its worktree, the changes are recorded, the next turn resumes there',
    async ({ agent, exec, api, skills }) => {
      const dir = tempDir();
      const repo = makeRepo(dir);
      const agents = realAgentBin(dir, apis);
      const db = join(dir, 'home', 'runledger.db');
      const daemon = await startBoard(db, {
        command: 'daemon',
        args: ['--exec', exec, '--heartbeat-s', '1', '--repo', `app=${repo}`],
        env: { ...GIT_IDENTITY, ...agents.env },
      });
      await daemon.process.waitForOutput(/push stream connected/);
      const lane = `${agent}-lane`;
      const tree = join(dir, 'home', 'workspaces', 'local', 'app.worktrees', lane);
      const asked = apis.requests.length;
      // A skill the lane's claim brought, where the computer writes it: the lane's plain folder.
      const skill = join(dir, 'home', 'workspaces', 'local', lane, skills, `${agent}-skill`);
      mkdirSync(skill, { recursive: true });
      writeFileSync(join(skill, 'SKILL.md'), `---\nname: ${agent}-skill\ndescription: the lane's skill for ${agent}\n---\nSay hi.\n`);

      const first = await turn(daemon, { lane, prompt: `WRITE notes.txt written by ${agent}` });
      expect(first, daemon.process.describe()).toMatchObject({ state: 'succeeded', reply: 'wrote notes.txt' });
      expect(readFileSync(join(tree, 'notes.txt'), 'utf8')).toBe(`written by ${agent}\n`);
      expect(first.changes).toMatchObject({
        base: git(repo, 'rev-parse', 'main'),
        head: git(repo, 'rev-parse', 'main'),
        files_changed: 1,
        insertions: 1,
        deletions: 0,
        commit_count: 0,
        uncommitted_files: 1,
      });
      // The agent worked in the lane's worktree, on its branch; the main checkout is untouched.
      expect(git(tree, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`runledger/${lane}`);
      expect(existsSync(join(repo, 'notes.txt'))).toBe(false);
      expect(apis.requests.slice(asked).every((r) => r.api === api)).toBe(true);
      // The agent saw the lane's skill in its worktree, and it is not part of the turn's changes.
      expect(apis.requests.slice(asked).some((r) => JSON.stringify(r.body).includes(`the lane's skill for ${agent}`))).toBe(true);
      expect(existsSync(join(tree, skills, `${agent}-skill`, 'SKILL.md'))).toBe(true);

      const log = readLog(db);
      const session = eventsOf(log, 'run.session.announced', first.runId)[0]?.data.sessionId;
      expect(session).toEqual(expect.any(String));

      // The next turn resumes the session in the same worktree: the model is sent the first turn back.
      const before = apis.requests.length;
      const second = await turn(daemon, { lane, prompt: 'and now?' });
      expect(second).toMatchObject({ state: 'succeeded', reply: 'heard: and now?' });
      // It changed nothing more: the first turn's file is still there, uncommitted, on the same HEAD.
      expect(second.changes).toMatchObject({ base: first.changes?.base, files_changed: 1, commit_count: 0, uncommitted_files: 1 });
      const resumed = apis.requests.slice(before).map((r) => JSON.stringify(r.body));
      expect(resumed.some((body) => body.includes(`WRITE notes.txt written by ${agent}`) && body.includes('and now?'))).toBe(true);
      expect(eventsOf(readLog(db), 'run.process.began', second.runId)[0]?.data.resuming).toBe(session);
    },
  );
});
