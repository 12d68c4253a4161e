import { z } from 'zod';

/** The longest one move: a Payment lives at most a day, an approval code ten minutes. */
export const MAX_CLOCK_MOVE_SECONDS = 30 * 24 * 60 * 60;
/** How far a resource's clock may be moved in all (an int of seconds in the table, far below its bound). */
export const MAX_CLOCK_ADVANCED_SECONDS = 366 * 24 * 60 * 60;

export const SANDBOX_CLOCK_RESOURCES = ['payment', 'vault_policy_approval'] as const;
export type SandboxClockResource = (typeof SANDBOX_CLOCK_RESOURCES)[number];

/** POST /v2/sandbox/.../advance-clock */
export const ZAdvanceClock = z.strictObject({
  seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_CLOCK_MOVE_SECONDS)
    .meta({ description: "How far to move the resource's clock forward, in whole seconds.", example: 60 }),
});
export type TAdvanceClock = z.output<typeof ZAdvanceClock>;

export const ZSandboxClock = z.strictObject({
  object: z.literal('sandbox_clock'),
  resourceType: z.enum(SANDBOX_CLOCK_RESOURCES),
  resourceId: z.string(),
  moveId: z.string().regex(/^clock_move_[A-Za-z0-9]+$/),
  seconds: z.number().int().min(1).meta({ description: 'How far this move moved the clock.' }),
  advancedSeconds: z.number().int().min(1).meta({ description: 'How far the clock stands ahead of real time: the sum of every move.' }),
  clockTime: z.iso.datetime().meta({ description: "The resource's clock when the move was made (real time plus advancedSeconds)." }),
  createdAt: z.iso.datetime(),
});
export type TSandboxClock = z.output<typeof ZSandboxClock>;

export const ZSandboxClockResponse = z.strictObject({ sandboxClock: ZSandboxClock });
