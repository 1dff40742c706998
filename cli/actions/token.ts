import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { SUBMIT_TOKENS_STREAM } from '../../events/tokenEvents.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import type { TokenAddOptions, TokenRevokeOptions } from '../commands/token.ts';
import { logName, openLog } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/** Another `token add` may append between this one's read and its append: read again, this many times. */
const ATTEMPTS = 5;

/**
 * `runledger token add NAME`: a submit token, printed once; the log records `token.added` with its
 * hash only, at the version of the tokens' stream just read, so two adds of one name cannot both win.
 */
export async function addToken(name: string, options: TokenAddOptions): Promise<void> {
  if (!isSafeId(name)) throw new Error(`token name ${JSON.stringify(name)} must match ${SAFE_ID_RULE}`);
  const store = await openLog(options);
  try {
    for (let attempt = 1; ; attempt++) {
      const recorded = await store.readStream(SUBMIT_TOKENS_STREAM);
      if (recorded.some((e) => e.type === 'token.added' && e.data.name === name)) {
        throw new Error(
          `the log ${logName(options.db)} has a submit token named ${name} already (a token is shown only once): give the new one another name`,
        );
      }
      const token = newToken();
      const result = await store.append({
        expected: { [SUBMIT_TOKENS_STREAM]: recorded.at(-1)?.version ?? 0 },
        events: [{ stream: SUBMIT_TOKENS_STREAM, type: 'token.added', data: { name, tokenHash: hashToken(token) }, at: systemClock.now() }],
      });
      if (result.ok) {
        print(options, { name, token }, () => `submit token ${name} added; its token (shown once):\n${token}`);
        return;
      }
      if (attempt === ATTEMPTS) throw result.conflict;
    }
  } finally {
    await store.close();
  }
}

/**
 * `runledger token revoke NAME`: the log records `token.revoked`, and every board refuses that token
 * from then on (docs/rules.md#postgresql-board). The name stays taken; a token file is not revoked here.
 */
export async function revokeToken(name: string, options: TokenRevokeOptions): Promise<void> {
  if (!isSafeId(name)) throw new Error(`token name ${JSON.stringify(name)} must match ${SAFE_ID_RULE}`);
  const store = await openLog(options);
  try {
    for (let attempt = 1; ; attempt++) {
      const recorded = await store.readStream(SUBMIT_TOKENS_STREAM);
      if (!recorded.some((e) => e.type === 'token.added' && e.data.name === name)) {
        throw new Error(`the log ${logName(options.db)} has no submit token named ${name}: \`runledger token add ${name}\` makes one`);
      }
      if (recorded.some((e) => e.type === 'token.revoked' && e.data.name === name)) {
        throw new Error(`submit token ${name} is revoked already in the log ${logName(options.db)}: nothing to do`);
      }
      const result = await store.append({
        expected: { [SUBMIT_TOKENS_STREAM]: recorded.at(-1)?.version ?? 0 },
        events: [{ stream: SUBMIT_TOKENS_STREAM, type: 'token.revoked', data: { name }, at: systemClock.now() }],
      });
      if (result.ok) {
        print(options, { name, revoked: true }, () => `submit token ${name} revoked: boards of this log refuse it from now on`);
        return;
      }
      if (attempt === ATTEMPTS) throw result.conflict;
    }
  } finally {
    await store.close();
  }
}
