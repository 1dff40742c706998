import { adoptionSentences } from '../../events/adoptionSentences.ts';
import { boardSentences } from '../../events/boardSentences.ts';
import type { DomainEvent, EventType } from '../../events/catalog.ts';
import { edgeSentences } from '../../events/edgeSentences.ts';
import { executionSentences } from '../../events/executionSentences.ts';
import { hookSentences } from '../../events/hookSentences.ts';
import { logSentences } from '../../events/logSentences.ts';
import { notificationSentences } from '../../events/notificationSentences.ts';
import { outboxSentences } from '../../events/outboxSentences.ts';
import { queueSentences } from '../../events/queueSentences.ts';
import { sessionSentences } from '../../events/sessionSentences.ts';
import { tokenSentences } from '../../events/tokenSentences.ts';

/**
 * Each group's sentences, kept beside its definitions (events/words.ts): a new event type does not
 * compile until its group has a sentence for it.
 */
const SENTENCES = {
  ...outboxSentences,
  ...queueSentences,
  ...executionSentences,
  ...boardSentences,
  ...edgeSentences,
  ...sessionSentences,
  ...hookSentences,
  ...notificationSentences,
  ...adoptionSentences,
  ...tokenSentences,
  ...logSentences,
} satisfies Record<EventType, unknown>;

/** One line a person can read for any event of the log: what `runledger audit` prints beside it. */
export function describeEvent(event: DomainEvent): string {
  const say = SENTENCES[event.type] as ((event: DomainEvent) => string) | undefined;
  return oneLine(say ? say(event) : `an event of type ${event.type}`);
}

const MAX_LINE = 300;

/** Errors and replies can span lines and pages; a timeline line is one line, bounded. */
function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ⏎ ').trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 1)}…` : flat;
}
