/**
 * Server-sent events as a streamed Response: `data: {json}\n\n` per event, `data: [DONE]\n\n` at
 * the end. Each event is handed to the node adapter as it is sent, so it leaves at once. A client
 * that goes away cancels the stream: later events are dropped (the generation still finishes, its
 * batch-mates keep streaming).
 */
export interface EventStream {
  response: Response;
  send(value: unknown): void;
  /** Sends `[DONE]` and ends the stream. */
  end(): void;
  /** Ends the stream without `[DONE]` (a failure after the stream began). */
  abort(): void;
}

const encoder = new TextEncoder();

export function eventStream(): EventStream {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start: (started) => {
      controller = started;
    },
    cancel: () => {
      open = false;
    },
  });
  const write = (text: string): void => {
    if (open) controller.enqueue(encoder.encode(text));
  };
  const close = (): void => {
    if (!open) return;
    open = false;
    controller.close();
  };
  return {
    response: new Response(body, {
      status: 200,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      },
    }),
    send: (value) => write(`data: ${JSON.stringify(value)}\n\n`),
    end: () => {
      write('data: [DONE]\n\n');
      close();
    },
    abort: close,
  };
}
