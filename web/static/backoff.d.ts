// Types of backoff.js for the server's tests and benches (the page loads the .js as it is).
export declare const BACKOFF: { readonly firstMs: number; readonly maxMs: number; readonly healthyMs: number };
export declare function reconnectDelay(failures: number, random?: () => number): number;
export declare function failuresAfter(failures: number, closed: { openedForMs: number | null }): number;
