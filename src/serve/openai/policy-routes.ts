/**
 * The OpenAI API of a served policy as Hono routes, one handler per endpoint:
 *
 *   GET  /health, /v1/models, /v1/models/{id}     model-routes below (the gateway shares them)
 *   POST /v1/chat/completions                      chat-completions.ts
 *   POST /v1/completions                           completions.ts
 *
 * Errors answer OpenAI's shape (../error-bodies.ts).
 */
import type { Hono } from 'hono';
import { openAiErrorResponse, RequestError } from '../error-bodies.ts';
import { jsonResponse, requestPath, serverApp, type ServerContext, type ServerEnv } from '../hono-server.ts';
import { chatCompletion } from './chat-completions.ts';
import { completion } from './completions.ts';
import type { PolicyContext } from './policy-context.ts';
import { chatRequestSchema, completionRequestSchema } from './protocol.ts';

export function policyApp(context: PolicyContext): Hono<ServerEnv> {
  const app = serverApp();
  addModelRoutes(app, context);
  app.post('/v1/chat/completions', async (c) => {
    const request = await context.readBody(c, chatRequestSchema);
    context.checkModel(request.model);
    return (await chatCompletion(context, request, c.env.outgoing)).response;
  });
  app.post('/v1/completions', async (c) => {
    const request = await context.readBody(c, completionRequestSchema);
    context.checkModel(request.model);
    return completion(context, request, c.env.outgoing);
  });
  app.notFound((c) => openAiErrorResponse(policyNotFound(c)));
  app.onError((error) => openAiErrorResponse(error));
  return app;
}

/** GET /health, /v1/models and /v1/models/{id}. */
export function addModelRoutes(app: Hono<ServerEnv>, context: PolicyContext): void {
  app.get('/health', () => jsonResponse(200, { status: 'ok' }));
  app.get('/v1/models', () => jsonResponse(200, { object: 'list', data: [context.modelCard] }));
  app.get('/v1/models/:id{.+}', (c) => {
    context.checkModel(c.req.param('id'));
    return jsonResponse(200, context.modelCard);
  });
}

/** The 404 of a path the policy server does not serve, listing the ones it does. */
export function policyNotFound(c: ServerContext): RequestError {
  return new RequestError(
    404,
    `${c.req.method} ${requestPath(c)} not found; endpoints: POST /v1/chat/completions, POST /v1/completions, GET /v1/models`,
  );
}
