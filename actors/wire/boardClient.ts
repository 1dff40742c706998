/**
 * The computer's HTTP calls to the board (SPEC section 7). Every answer comes back as a status and a
 * parsed body, never as a throw: status 0 is a network error, for the deciders to classify.
 */
export interface BoardAnswer {
  readonly status: number;
  readonly body?: unknown;
}

export class BoardClient {
  constructor(
    private readonly server: string,
    private readonly computer: string,
    private readonly computerToken: string,
    private readonly timeoutMs = 15_000,
  ) {}

  claim(runId: string): Promise<BoardAnswer> {
    return this.post(`/v1/computers/${encodeURIComponent(this.computer)}/runs/${encodeURIComponent(runId)}/claim`, this.computerToken, {});
  }

  heartbeat(runId: string, runToken: string, progress?: string): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/heartbeat`, runToken, progress ? { progress } : {});
  }

  reply(runId: string, runToken: string, text: string): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/reply`, runToken, { text });
  }

  complete(runId: string, runToken: string, result: { ok: boolean; error?: string }): Promise<BoardAnswer> {
    return this.post(`/v1/runs/${encodeURIComponent(runId)}/complete`, runToken, result);
  }

  private async post(path: string, token: string, body: unknown): Promise<BoardAnswer> {
    try {
      const response = await fetch(`${this.server}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed };
    } catch {
      return { status: 0 };
    }
  }
}
