/**
 * A math answer checker tolerant to form: `0.5`, `1/2`, `.5`, `1 1/2` (mixed), `x = 3`,
 * `$1,250.00`, `12 km`, `3 apples` all read as numbers; thousands separators must be real
 * groups of three (`1,250` yes, `1,25` no). A decimal answer of a non-terminating value counts
 * when it is rounded to at least `minDecimals` places (`0.33` for 1/3). Anything else with a
 * digit in it after the number (`3 or 4`) is not an answer.
 */
import { equals, parseDecimal, rational, toNumber, type Rational } from './rational.ts';

export interface ReadAnswer {
  value: Rational;
  /** Decimal places written (0 for integers and fractions). */
  decimals: number;
}

const numberPattern =
  /^([-+]?)(?:(\d+)\s+(\d+)\s*\/\s*(\d+)|(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)(?:\s*\/\s*(\d+))?)/;

/** Reads the number in an answer, or null when there is none or it is ambiguous. */
export function readAnswer(text: string): ReadAnswer | null {
  let rest = text.trim().toLowerCase();
  const assignment = rest.match(/^[a-z]\s*=\s*/);
  if (assignment) rest = rest.slice(assignment[0].length);
  rest = rest.replace(/^(?:about|approximately|answer:?)\s*/, '');
  let sign = '';
  const leadingSign = rest.match(/^[-+−]/);
  if (leadingSign) {
    sign = leadingSign[0] === '+' ? '' : '-';
    rest = rest.slice(1);
  }
  rest = rest.replace(/^[$€£]\s*/, '');
  const match = rest.match(numberPattern);
  if (match === null) return null;
  const tail = rest.slice(match[0].length).trim();
  if (/\d/.test(tail) || !/^[a-z%$€£/.\s²³-]*$/.test(tail)) return null;
  let value: Rational;
  let decimals = 0;
  try {
    if (match[2] !== undefined) {
      value = rational(Number(match[2]) * Number(match[4]) + Number(match[3]), Number(match[4]));
    } else {
      const plain = (match[5] ?? '').replace(/,/g, '');
      value = parseDecimal(plain);
      decimals = plain.split('.')[1]?.length ?? 0;
      if (match[6] !== undefined) {
        if (decimals > 0) return null;
        value = rational(value.numerator, Number(match[6]));
      }
    }
  } catch {
    return null;
  }
  if ((sign + match[1]).split('-').length % 2 === 0) value = rational(-value.numerator, value.denominator);
  return { value, decimals };
}

/** Whether `answer` states the value `gold` (exactly, or rounded to ≥ minDecimals places). */
export function answerMatches(answer: string, gold: Rational, minDecimals = 2): boolean {
  const read = readAnswer(answer);
  if (read === null) return false;
  if (equals(read.value, gold)) return true;
  if (read.decimals < minDecimals) return false;
  return Math.abs(toNumber(read.value) - toNumber(gold)) <= 0.5 * 10 ** -read.decimals + 1e-12;
}
