import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STREAM_NAME } from '../../events/envelope.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { SafeId } from '../../events/safeId.ts';

/** The rule as docs/rules.md#tools writes it: the one place in the tests that spells it out. */
const ID_RULE = /^[A-Za-z0-9-]{1,64}$/;

describe('the id rule: one schema, one predicate, one text', () => {
  it('given any string, then the schema, the predicate and the rule of docs/rules.md#tools agree on it', () => {
    const alphabet = fc.constantFrom(...'aZ09-_.:/ %é\n'.split(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 70 })), (text) => {
        const expected = ID_RULE.test(text);
        expect(isSafeId(text)).toBe(expected);
        expect(SafeId.safeParse(text).success).toBe(expected);
      }),
    );
  });

  it('given the edges (empty, 64 and 65 characters, a trailing newline, not a string), then only the ids of 1 to 64 safe characters pass', () => {
    expect(isSafeId('a'.repeat(64))).toBe(true);
    for (const bad of ['', 'a'.repeat(65), 'abc\n', '../etc', null, undefined, 7, ['a']]) expect(isSafeId(bad)).toBe(false);
  });

  it('given a bad id, then the schema names the rule in the words messages have always used', () => {
    const parsed = SafeId.safeParse('a.b');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('must match ^[A-Za-z0-9-]{1,64}$');
    expect(SAFE_ID_RULE).toBe('^[A-Za-z0-9-]{1,64}$');
  });

  it('given stream names, then STREAM_NAME built from the rule accepts [owner/]kind:id exactly as its spelled-out form did', () => {
    const spelled = /^(?:[A-Za-z0-9-]{1,64}\/)?[a-z]+:[A-Za-z0-9-]{1,64}$/;
    for (const name of [
      'run:r1',
      'c1/run:r-1',
      'c1/session:h-abc',
      'lane:x',
      'a/b/run:r',
      'Run:r',
      'run:',
      '/run:r',
      `${'c'.repeat(65)}/run:r`,
      `run:${'r'.repeat(64)}`,
    ]) {
      expect(STREAM_NAME.test(name), name).toBe(spelled.test(name));
    }
  });
});
