import type { Clock } from '../../../../runtime/actors/clock.ts';
import type { EventStore } from '../../../../runtime/store/eventStore.ts';
import type { HookCommands } from './hookNames.ts';

/** Where a round's ticks are recorded (only by a board with an `on_tick` hook). */
export const TICK_STREAM = 'hooks:tick';

/**
 * A round's tick, when an `on_tick` hook is configured: recorded, so the hook is taken from the log
 * like any other, once, and a crash that cuts it is seen. `counts` says what the round did. A board
 * with no tick hook records nothing: the log grows with decisions, not with time.
 */
export async function recordTick(store: EventStore, clock: Clock, commands: HookCommands, counts: Record<string, number> = {}): Promise<boolean> {
  if (!commands.on_tick) return false;
  const result = await store.append({
    expected: { [TICK_STREAM]: 'any' },
    events: [{ stream: TICK_STREAM, type: 'hook.tick.due', data: { counts }, at: clock.now() }],
  });
  return result.ok;
}
