import type { z } from 'zod';
import type { NoticeKindSchema } from './notificationEvents.ts';

/**
 * What an event type is to the readers that sort every type of the log rather than read a few: the
 * part of the audit summary that counts it (`runledger audit`), the notice a subscription hears it as
 * (docs/rules.md#notices), and whether the daemon tells it as it happens. Said once a type, in a table
 * at the foot of its group's file, so a new type is classified where it is defined and those readers
 * learn it from there: their switches and ignore lists are derived from these tables.
 *
 * A table beside the definitions rather than an argument of each `defineEvent`: a group's roles read
 * at a glance, the compiler asks for one row per type of the group (`GroupRoles`), and a definition
 * keeps saying only what its data is.
 */
export interface EventRoles {
  /** The part of the audit summary that counts it (`none`: an input, or a step whose outcome another event shows). */
  readonly summary: SummaryPart;
  /** What a subscription hears it as; null when none can. */
  readonly notice: NoticeKind | null;
  /** Whether the daemon tells it as it happens; `when.logged` when its data says it is the first of a wait. */
  readonly told: boolean | 'when.logged';
}

export type SummaryPart = 'board' | 'queue' | 'sessions' | 'none';
export type NoticeKind = z.infer<typeof NoticeKindSchema>;

/** One row per type of a group (`typeof xEvents`): a type missing or misspelled does not compile. */
export type GroupRoles<G> = { readonly [T in keyof G]: EventRoles };

/** Counted nowhere, heard by no subscription, not told as it happens. */
export const QUIET = { summary: 'none', notice: null, told: false } as const satisfies EventRoles;
