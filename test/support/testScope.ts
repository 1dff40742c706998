/**
 * What a test starts (processes, folders, shells) is stopped when that test ends. vitest's own
 * onTestFinished hangs its callback on "the current test", which for tests that run at once
 * (it.concurrent) is whichever started last, and none once one of them has ended (it then throws). A test
 * body wrapped in ownScope() is its own scope, carried through async context: whenTestEnds() called
 * anywhere below it, at any depth of awaits, hangs its cleanup on that test.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { onTestFinished, type TestContext } from 'vitest';

const scope = new AsyncLocalStorage<TestContext>();

/** Runs `cleanup` when the test running this ends: the ownScope() test around it, else vitest's current one. */
export function whenTestEnds(cleanup: () => void | Promise<void>): void {
  const test = scope.getStore();
  if (test) test.onTestFinished(cleanup);
  else onTestFinished(cleanup);
}

/** A test body that is its own scope for whenTestEnds(): for tests that run at once (take `expect` from the context too). */
export function ownScope(body: (test: TestContext) => Promise<void>): (test: TestContext) => Promise<void> {
  return (test) => scope.run(test, () => body(test));
}
