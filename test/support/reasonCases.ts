import { expect, it } from 'vitest';
import { codec, type DomainEvent } from '../../events/catalog.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';

/** An event as the log holds it, for the audit to word. */
export function stored(type: string, data: unknown, stream = 'c1/lane:A'): DomainEvent {
  return { seq: 1, stream, version: 1, type, data, at: 0, cause: null, actor: 'test:1' } as DomainEvent;
}

export type ReasonCase = [type: string, data: Record<string, unknown>, sentence: string];

/** Each case's data reads as its type, and the audit words it as `sentence` (events of `stream`). */
export function wordsAsRecorded(cases: ReasonCase[], stream?: string): void {
  it.each<ReasonCase>(cases)('%s %j → %s', (type, data, sentence) => {
    expect(codec.decodeData(1, type, data)).toEqual(data);
    expect(describeEvent(stored(type, data, stream))).toBe(sentence);
  });
}
