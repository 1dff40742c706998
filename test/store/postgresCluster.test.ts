import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Child } from '../support/processes.ts';

const clusterFolders = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('runledger-pg-')));

describe('the throwaway PostgreSQL cluster of a test run', () => {
  it('given a test run holding its cluster, when it is sent SIGTERM (timeout, a cancelled CI job), then the server is stopped and its folder removed before it ends', async () => {
    const before = clusterFolders();
    const holder = new Child('pgClusterHolder.ts', []);
    onTestFinished(() => void holder.process.kill('SIGKILL'));
    const url = (await holder.waitForLine((line) => line.startsWith('cluster '), 20_000)).slice('cluster '.length);
    const made = [...clusterFolders()].filter((name) => !before.has(name));
    expect(made).toHaveLength(1);

    holder.process.kill('SIGTERM');
    const ended = await holder.exited;

    expect(ended.signal ?? ended.code).not.toBeNull();
    expect(clusterFolders().has(made[0]!)).toBe(false);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
  });
});
