/** Something that says when it goes away, as a browser does when it crashes, is killed or is closed. */
export interface Disconnecting {
  once(event: 'disconnected', listener: () => void): unknown;
}

/**
 * One of what `launch` makes, shared by every caller while it lives: made on first use, and made again
 * on the use after it went away or after a launch failed, so no caller is handed a dead one or an old
 * failure. Callers at once while it is being made wait for the same one.
 */
export function sharedWhileConnected<T extends Disconnecting>(launch: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  return () => {
    if (current) return current;
    const launching = launch();
    current = launching;
    const forget = () => {
      if (current === launching) current = undefined;
    };
    launching.then((made) => made.once('disconnected', forget), forget);
    return launching;
  };
}
