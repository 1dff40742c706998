import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Child } from '../support/processes.ts';

/** The cluster folders a process made (each names its owner's pid): other test runs on the machine make theirs meanwhile. */
const clusterFoldersOf = (pid: number) =>
  readdirSync(tmpdir()).filter((name) => {
    const owner = join(tmpdir(), name, 'owner.pid');
    return name.startsWith('runledger-pg-') && existsSync(owner) && readFileSync(owner, 'utf8').trim() === String(pid);
  });

describe('the throwaway PostgreSQL cluster of a test run', () => {
  it('given a test run holding its cluster, when it is sent SIGTERM (timeout, a cancelled CI job), then the server is stopped and its folder removed before it ends', async () => {
    const holder = new Child('pgClusterHolder.ts', []);
    onTestFinished(() => void holder.process.kill('SIGKILL'));
    const url = (await holder.waitForLine((line) => line.startsWith('cluster '), 20_000)).slice('cluster '.length);
    const made = clusterFoldersOf(holder.process.pid!);
    expect(made).toHaveLength(1);

    holder.process.kill('SIGTERM');
    const ended = await holder.exited;

    expect(ended.signal ?? ended.code).not.toBeNull();
    expect(existsSync(join(tmpdir(), made[0]!))).toBe(false);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
  });
});
