/**
 * Tests: the onnxruntime sessions `OnnxSession.create` makes while `body` runs (how many a model,
 * a fork or a generation builds; the sessions themselves, to check they are released).
 */
import { OnnxSession } from './session.ts';

export async function sessionsMadeBy<R>(body: () => Promise<R>): Promise<{ result: R; sessions: OnnxSession[] }> {
  const create = OnnxSession.create;
  const sessions: OnnxSession[] = [];
  OnnxSession.create = async (...args) => {
    const session = await create.apply(OnnxSession, args);
    sessions.push(session);
    return session;
  };
  try {
    return { result: await body(), sessions };
  } finally {
    OnnxSession.create = create;
  }
}
