import type { Generated } from 'kysely';

/** The tables of a runledger file, typed for kysely (migrations, tools and read models). */
export interface LogDatabase {
  events: {
    seq: number;
    stream: string;
    version: number;
    type: string;
    data: string;
    at: number;
    cause: number | null;
    actor: string;
  };
  projection_checkpoints: {
    name: string;
    seq: number;
    state: string;
    saved_at: Generated<number>;
  };
  projection_snapshots: {
    name: string;
    seq: number;
    state: string;
    saved_at: Generated<number>;
  };
}
