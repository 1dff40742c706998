#!/usr/bin/env node
// The published entry point: runs the TypeScript sources directly through tsx's loader, so a fresh
// clone needs no build step before `npx runledger`.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
