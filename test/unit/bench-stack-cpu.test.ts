import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { partSeconds } from '../../bench/stack-cpu';

describe("the bench's CPU per part", () => {
  test('each process counts by its own difference: a busy backend that ends never makes the part negative, a new one counts whole', () => {
    const before = new Map([
      [10, 5.0],
      [11, 40.0], // a pool backend that has worked hard, then ends
    ]);
    const after = new Map([
      [10, 5.5],
      [12, 0.25], // a backend opened between the readings
    ]);
    assert.equal(partSeconds(before, after), 0.75);
  });

  test('a part with no process at the second reading is not measured', () => {
    assert.ok(Number.isNaN(partSeconds(new Map([[1, 2]]), new Map())));
  });
});
