import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';

/**
 * The prompt of `submit` and `run`: `--prompt`, else stdin. Stdin in a terminal is read too (a long
 * prompt is typed there), but said first on stderr, so a user who forgot `--prompt` is not left
 * facing a silent wait. An empty prompt is refused here, in one sentence, before anything is sent.
 */
export function readPrompt(command: 'submit' | 'run', given: string | undefined): string {
  let prompt = given;
  if (prompt === undefined) {
    // isatty, not process.stdin.isTTY: making process.stdin turns a terminal's fd non-blocking, and the read below then fails (EAGAIN).
    if (isatty(0)) {
      process.stderr.write(
        `runledger ${command}: reading the prompt from stdin: type it, then Ctrl-D on a line of its own (or give --prompt TEXT)\n`,
      );
    }
    prompt = readFileSync(0, 'utf8');
  }
  if (prompt.trim() === '') {
    throw new Error(
      `the prompt is empty: give it with --prompt TEXT or on stdin (echo TEXT | runledger ${command} ...)${given === undefined ? ' (stdin held nothing)' : ''}`,
    );
  }
  return prompt;
}
