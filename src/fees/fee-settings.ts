import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/db.ts';
import { maybeOne, one, run, sql } from '../db/sql.ts';
import { validationError } from '../domain/errors.ts';
import { DEFAULT_FEE_SCHEDULE, type FeeSchedule, FeeSchedulePatch, FeeScheduleSchema, mergeFeeSchedule } from '../domain/fees.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { Fields, operatorSecurity, type Router } from '../http/router.ts';

const Settings = Type.Object({ feeSchedule: FeeScheduleSchema }, { title: 'Settings' });
const SettingsPatch = Fields({ feeSchedule: FeeSchedulePatch }, { title: 'SettingsPatch' });

export async function platformSchedule(q: Queryable): Promise<FeeSchedule> {
  const r = await run<{ fee_schedule: FeeSchedule }>(q, sql`SELECT fee_schedule FROM platform_settings`);
  return maybeOne(r)?.fee_schedule ?? DEFAULT_FEE_SCHEDULE;
}

/** A deep-partial patch over a base schedule; 400 naming every bad field (prefixed by `prefix`). */
export function mergedSchedule(base: FeeSchedule, patch: unknown, prefix: string): FeeSchedule {
  const merged = mergeFeeSchedule(base, patch);
  if (!merged.ok)
    throw validationError(
      (merged.refusal.details ?? []).map((e) => ({ field: e.field === 'feeSchedule' ? prefix : `${prefix}.${e.field}`, message: e.message })),
    );
  return merged.value;
}

export async function feeSettingsRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['operator'], security: operatorSecurity };

  app.get(
    '/admin/settings',
    {
      schema: {
        ...common,
        operationId: 'getSettings',
        summary: "The platform's default fee schedule",
        response: responses({ 200: Settings }, OPERATOR_ERRORS),
      },
    },
    async () => ({ feeSchedule: await platformSchedule(ctx.db) }),
  );

  app.patch(
    '/admin/settings',
    {
      schema: {
        ...common,
        operationId: 'updateSettings',
        summary: "Change the platform's default fee schedule (deep-partial); applies to sales created afterwards",
        description:
          'Names any keys of the schedule and keeps the rest. An unknown key or a value out of its range is a 400 naming it, and nothing changes.',
        body: SettingsPatch,
        bodyExamples: {
          pixPercent: { summary: 'PIX at 1.50 %, the rest kept', value: { feeSchedule: { pix: { percentBasisPoints: 150 } } } },
          reserve: { summary: 'Hold 10 % of each net for 30 days', value: { feeSchedule: { reserveBasisPoints: 1000, reserveDays: 30 } } },
          cards: {
            summary: 'Card fees and the chargeback fine',
            value: {
              feeSchedule: {
                creditCard: { fixedCents: 49, percentBasisPoints: 499 },
                debitCard: { fixedCents: 49, percentBasisPoints: 299 },
                chargebackFineCents: 1500,
              },
            },
          },
        },
        response: responses({ 200: Settings }, [...OPERATOR_ERRORS, ...BODY_ERRORS, 'VALIDATION_ERROR']),
      },
    },
    async (request) => {
      const schedule = await ctx.db.tx(async (q) => {
        // Locks the settings row (or its absence, through the insert) so two patches do not lose one another.
        await run(
          q,
          sql`INSERT INTO platform_settings (fee_schedule) VALUES (${JSON.stringify(DEFAULT_FEE_SCHEDULE)}::jsonb) ON CONFLICT (id) DO NOTHING`,
        );
        const current = one(await run<{ fee_schedule: FeeSchedule }>(q, sql`SELECT fee_schedule FROM platform_settings FOR UPDATE`)).fee_schedule;
        const next = mergedSchedule(current, request.body.feeSchedule, 'feeSchedule');
        await run(q, sql`UPDATE platform_settings SET fee_schedule = ${JSON.stringify(next)}::jsonb, updated_at = now()`);
        return next;
      });
      return { feeSchedule: schedule };
    },
  );
}
