import { createRequire } from 'node:module';

/**
 * Modules of Node's own that many commands may need and most starts never use, each loaded by its
 * first use, synchronously, as the import it stands for: `audit`, `replay`, `computer list` and the
 * other tools on a log of this machine may call a board or check a token and do not, and load neither
 * http and https (~10 ms of CPU at a start) nor crypto (~5 ms); and a log's starting checkpoints,
 * deflated, are read or written only after a retention cut, by zlib (~4 ms).
 */
const load = createRequire(import.meta.url);

export const http = (): typeof import('node:http') => load('node:http');
export const https = (): typeof import('node:https') => load('node:https');
export const crypto = (): typeof import('node:crypto') => load('node:crypto');
export const zlib = (): typeof import('node:zlib') => load('node:zlib');
