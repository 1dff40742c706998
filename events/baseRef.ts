/**
 * What a run may name as the commit its lane's worktree starts from (`submit --base REF`, API `base`):
 * a branch, tag, sha or a git revision like `main~2`. It goes on a git command line, so it may not
 * start with `-` (git would read an option), and holds none of the characters git refuses in a ref or
 * a shell could mistake (spaces, `:`, `\`, `..`). No zod here: the CLI checks it without the schemas.
 */
export const BASE_REF = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/@^~{}+-]{1,255}$/;

export const BASE_REF_RULE = 'letters, digits and . _ / @ ^ ~ { } + -, 1 to 255 of them, not starting with - and without ..';

export function isBaseRef(value: unknown): value is string {
  return typeof value === 'string' && BASE_REF.test(value);
}
