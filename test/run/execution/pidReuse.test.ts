/**
 * When a strays sweep may take a pid the last sweep read for the same process without a `stat` of its
 * /proc entry (adapters/agent/strays.ts): only while too few tasks were made since for the kernel's
 * pid counter to have gone round.
 */
import { describe, expect, it } from 'vitest';
import { type MachineTasks, noPidReused } from '../../../adapters/agent/strays.ts';

const at = (forks: number, alive = 200, pidMax = 32_768): MachineTasks => ({ forks, alive, pidMax });

describe('whether a pid can have been given again between two sweeps', () => {
  it('given a few new tasks, then no: the pids read are the same processes', () => {
    expect(noPidReused(at(1_000), at(1_050))).toBe(true);
  });

  it('given about half the pid space made since, or less room for a smaller pid_max, then maybe: each entry is checked', () => {
    // (32768 - 300 - 200) / 2 = 16134 new tasks at most.
    expect(noPidReused(at(0), at(16_133))).toBe(true);
    expect(noPidReused(at(0), at(16_134))).toBe(false);
    expect(noPidReused(at(0), at(100, 200, 32_768))).toBe(true);
    expect(noPidReused(at(0, 200, 32_768), at(200, 200, 700))).toBe(false);
    // Many tasks alive leave fewer pids to go round.
    expect(noPidReused(at(0, 200), at(10_000, 20_000))).toBe(false);
  });

  it('given no earlier sweep, or a machine whose counts cannot be read, then maybe', () => {
    expect(noPidReused(null, at(10))).toBe(false);
    expect(noPidReused(at(10), null)).toBe(false);
  });
});
