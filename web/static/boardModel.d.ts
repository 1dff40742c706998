// Types of boardModel.js for the server's tests (the page loads the .js as it is).
export declare const LISTS: Readonly<Record<'lanes' | 'claims' | 'sessions' | 'computers', (item: never) => string>>;
export declare function applyDelta<V>(view: V, delta: unknown): V;
