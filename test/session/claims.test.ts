import { describe, expect, it } from 'vitest';
import { claimHolds } from '../../actors/session/claims.ts';

describe('close claims of writers whose host names hold colons', () => {
  const claim = { lock: 'a:b:100', expires: 1_000 };

  it('given a claim by host "a:b" and a process of host "a:b", then its holder reading decides: a dead holder keeps no one off', () => {
    expect(claimHolds(claim, 'a:b:200', { lock: 'a:b:100', alive: false }, 0)).toBe(false);
    expect(claimHolds(claim, 'a:b:200', { lock: 'a:b:100', alive: true }, 0)).toBe(true);
  });

  it('given a claim by host "a:b" and a process of host "a", then it is another host\'s claim: it holds until it expires', () => {
    expect(claimHolds(claim, 'a:200', { lock: 'a:b:100', alive: false }, 0)).toBe(true);
    expect(claimHolds(claim, 'a:200', null, 1_000)).toBe(false);
  });
});
