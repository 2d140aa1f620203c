import type { FastifyReply } from 'fastify';
import type { Reservation } from '../../access/quota/quota-ledger.js';
import { abortedStatus } from '../../gateway/cancel.js';
import type { ChatPlan } from '../../gateway/completions/chat-plan.js';
import type { ChatContext, ChatRunner } from '../../gateway/completions/chat-runner.js';
import { attemptsHeader, attemptsOf } from '../../gateway/routing/execute.js';
import { toGatewayError } from '../error-handler.js';

/*
 * The settlement both chat answers (chat-pipeline.ts's `completeChat`, chat-stream.ts's
 * `streamChat`) share when no upstream gave an answer.
 */

/**
 * Settles and logs a request whose route failed before anything was streamed, with the trail
 * of attempts the route executor attached to the error, and puts that trail in the header.
 */
export async function finishFailed(
  runner: ChatRunner,
  plan: ChatPlan,
  ctx: ChatContext,
  reservation: Reservation,
  reply: FastifyReply,
  err: unknown,
) {
  const e = toGatewayError(err, reply.request);
  const attempts = attemptsOf(err);
  if (attempts?.length && !reply.sent) reply.header('x-modelgate-attempts', attemptsHeader(attempts));
  await runner.finish(plan, ctx, reservation, {
    status: ctx.signal.aborted ? abortedStatus(ctx.signal) : e.status,
    error: err,
    attempts,
  });
  return e;
}
