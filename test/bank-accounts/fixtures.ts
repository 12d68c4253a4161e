import { US_BANK_ACCOUNT } from '../../simulate/partner';

/** A valid US link body: the simulation's account (JPMorgan Chase's New York routing number), accountType left to its default. */
export const US_NUMBER = US_BANK_ACCOUNT.accountNumber;

export const usBody = (accountNumber = US_NUMBER) => {
  const body: Partial<typeof US_BANK_ACCOUNT> = { ...US_BANK_ACCOUNT, accountNumber };
  delete body.accountType;
  return body as Omit<typeof US_BANK_ACCOUNT, 'accountType'>;
};
