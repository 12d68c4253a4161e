import { generate } from 'otplib';
import { randomToken } from '../../src/domain/values/ids';
import { createOperator, issueOperatorToken } from '../../src/domain/operators/operator-accounts';
import type { OperatorRole } from '../../src/domain/operators/pure/operator-roles';
import { getHarness, TEST_SERVICE_SECRET } from './harness';

/** An operator made as the CLI makes one, with an admin API token of their own and their TOTP secret. */
export interface TestOperator {
  id: string;
  email: string;
  role: OperatorRole;
  token: string;
  totpSecret: string;
  /** The authenticator's code now (or `stepsAhead` steps of 30 s later: a step already taken is refused). */
  totp(stepsAhead?: number): Promise<string>;
}

export async function createTestOperator(
  role: OperatorRole,
  email = `${role}-${randomToken(8).toLowerCase()}@ops.example`,
): Promise<TestOperator> {
  const h = await getHarness();
  const created = await createOperator(h.db.prisma, TEST_SERVICE_SECRET, { email, name: `Test ${role}`, role });
  const { token } = await issueOperatorToken(h.db.prisma, email, { name: 'tests', days: 1 });
  return {
    id: created.operator.id,
    email,
    role,
    token,
    totpSecret: created.totpSecret,
    totp: (stepsAhead = 0) => generate({ secret: created.totpSecret, epoch: Math.floor(Date.now() / 1000) + 30 * stepsAhead }),
  };
}
