import type { Sentences } from './words.ts';

/** What `runledger audit` says of each event of the board's hooks (see words.ts). */
export const hookSentences: Sentences<'hook'> = {
  // The board's hooks.
  'hook.tick.due': () => 'a round ticked: the on_tick hook is due',
  'hook.exited': (event) => {
    const { hook, ok, exitCode, signal, error, outputTail, durationMs, effect } = event.data;
    const how = error ?? (exitCode !== null ? `exit ${exitCode}` : signal ? `signal ${signal}` : 'no exit code');
    const said = outputTail.trim().split('\n').at(-1);
    return `hook ${hook} (for seq ${effect}) ${ok ? 'ran' : 'failed'}: ${how}, ${durationMs} ms${said ? `; it said: ${said}` : ''}`;
  },
  'hook.interrupted': (event) => `hook ${event.data.hook} (for seq ${event.data.effect}) was interrupted: ${event.data.detail}`,
};
