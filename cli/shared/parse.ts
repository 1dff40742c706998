import { type CommandUnknownOpts, InvalidArgumentError } from '@commander-js/extra-typings';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';

/**
 * Parsers of option text, for the command definitions: loaded at every start, so none of them needs
 * a schema. An option checked against one (an id, a hook name) is collected as text here and checked
 * by its command's action, which loads the schema; `refuseOption` words the refusal as these do.
 */

/** A whole-number option of at least `min`, with an error that names the option. */
export function int(name: string, min: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) throw new InvalidArgumentError(`${name} wants a whole number ≥ ${min}, not "${text}"`);
    return value;
  };
}

/** An option or argument that takes an id (a lane, a computer): the id rule, checked without a schema. */
export function safeId(name: string) {
  return (text: string): string => {
    if (!isSafeId(text)) throw new InvalidArgumentError(`${name} wants an id matching ${SAFE_ID_RULE}, not "${text}"`);
    return text;
  };
}

/** A text option of 1 to `max` characters. */
export function text(name: string, max: number) {
  return (value: string): string => {
    if (value.trim() === '' || value.length > max) throw new InvalidArgumentError(`${name} wants 1 to ${max} characters, not ${value.length}`);
    return value;
  };
}

/** A whole-number option bounded above too (docs/rules.md#computer-behaviour, "Bounds"). */
export function atMost(name: string, max: number, parse: (text: string) => number) {
  return (text: string): number => {
    const value = parse(text);
    if (value > max) throw new InvalidArgumentError(`${name} wants at most ${max}, not "${text}"`);
    return value;
  };
}

/**
 * `--server URL`: a whole http:// or https:// URL (docs/rules.md#wire-and-cli names it a URL). Without a scheme it is
 * refused, not guessed: `localhost:7420` parses as scheme `localhost:`, and guessing http:// would
 * send the token in clear to a board that may be meant for https://.
 */
export function serverUrl(text: string): string {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // no URL at all: refused below like one without a scheme
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.host === '') {
    throw new InvalidArgumentError(`--server wants the board's URL with its scheme, e.g. http://${text.replace(/^[a-z]+:\/\//i, '')}, not "${text}"`);
  }
  return text.replace(/\/+$/, '');
}

/** `daemon --server URL1,URL2,…`: boards of one log (docs/rules.md#postgresql-board), each checked as `serverUrl` checks one. */
export function serverUrls(text: string): string {
  const urls = text.split(',').map((url) => url.trim());
  if (urls.some((url) => url === '')) throw new InvalidArgumentError(`--server wants URLs separated by commas, with none empty, not "${text}"`);
  return urls.map(serverUrl).join(',');
}

/** A seq of the log (`replay --until`). */
export function parseSeq(text: string): number {
  const seq = Number(text);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new Error(`--until wants a seq (a whole number ≥ 0), not "${text}"`);
  return seq;
}

/**
 * A repeatable option's texts in the order given. No default value: the help would print an empty
 * list as `(default: [])`; absent, the option is `undefined`.
 */
export function collect(text: string, previous: readonly string[] = []): string[] {
  return [...previous, text];
}

/**
 * Refuses an option's text in an action exactly as commander refuses what a parser rejects (the same
 * words, exit 2), for the options whose check needs a schema (see the top of this file).
 */
export function refuseOption(command: CommandUnknownOpts, flags: string, text: string, problem: string): never {
  return command.error(`error: option '${flags}' argument '${text}' is invalid. ${problem}`, { exitCode: 2, code: 'commander.invalidArgument' });
}
