/**
 * A request's client leaving as an AbortSignal: aborted when the connection of `outgoing` closes
 * before its whole response was written (the client disconnected mid-generation or mid-stream,
 * or the server closed). The batcher stops generating for a job whose signal aborted.
 */
import type { ServerResponse } from 'node:http';

export function clientGoneSignal(outgoing: ServerResponse | undefined): AbortSignal | undefined {
  if (outgoing === undefined) return undefined; // a request not served by node:http (app.fetch in a test)
  const gone = new AbortController();
  if (outgoing.destroyed && !outgoing.writableFinished) gone.abort();
  else
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) gone.abort();
    });
  return gone.signal;
}
