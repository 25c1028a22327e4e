/**
 * Does a calculator call's expression do the question's arithmetic? Both are read as their
 * integers and their operators (`×` as `*`, `−` as `-`; spaces, parentheses and anything else
 * ignored) and compared as multisets: `23*37` and `37 × 23` match `37 * 23`; `37 * 24`, `37 + 23`
 * and `851` do not. A near-miss signal for shaping (rewards.ts `call_operands`), not a proof the
 * call computes the answer (that is `tool_call`).
 */

const integerPattern = /\d+/g;
const operatorPattern = /[-+*]/g;

function parts(expression: string): { integers: string[]; operators: string[] } {
  const text = expression.replace(/−/g, '-').replace(/×/g, '*');
  const integers = (text.match(integerPattern) ?? []).map((digits) => String(Number(digits))).sort();
  const operators = (text.match(operatorPattern) ?? []).sort();
  return { integers, operators };
}

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((item, i) => item === b[i]);

/** True when `call` holds the same integers and operators as `question` (each counted, order free). */
export function sameOperation(call: string, question: string): boolean {
  const asked = parts(question);
  const given = parts(call);
  return (
    asked.integers.length > 0 && sameList(given.integers, asked.integers) && sameList(given.operators, asked.operators)
  );
}
