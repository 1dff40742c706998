import { isDeepStrictEqual } from 'node:util';

/** The path of the first value that differs between two JSON values, for a report a person can act on. */
export function firstDifference(expected: unknown, got: unknown, path = 'state'): string {
  if (isDeepStrictEqual(expected, got)) return '';
  if (expected && got && typeof expected === 'object' && typeof got === 'object') {
    const keys = new Set([...Object.keys(expected), ...Object.keys(got)]);
    for (const key of keys) {
      const inner = firstDifference((expected as Record<string, unknown>)[key], (got as Record<string, unknown>)[key], `${path}.${key}`);
      if (inner) return inner;
    }
  }
  return `${path}: stored ${JSON.stringify(expected)?.slice(0, 200)}, rebuilt ${JSON.stringify(got)?.slice(0, 200)}`;
}
