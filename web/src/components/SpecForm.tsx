import { type FormEvent, useState } from 'react';
import { ApiError, errorText, fieldMessage } from '../api';
import { type FieldRules, NOT_A_NUMBER, numberRuleProblem, textRuleProblem } from '../field-rules';
import { toUnix } from '../format';
import { holdsBadNumber } from '../number-input';
import { ErrorBox, Field } from './ui';

export type FormValues = Record<string, string | boolean>;

export interface FieldSpec extends FieldRules {
  name: string;
  label: string;
  type?: 'text' | 'number' | 'url' | 'password' | 'textarea' | 'select' | 'checkbox' | 'datetime';
  options?: [string, string][];
  hint?: string;
  required?: boolean;
  wide?: boolean;
  placeholder?: string;
  autoComplete?: string;
  step?: string;
  /** Shown but not changeable (its value still goes to onSubmit: leave it out there if it must not be sent). */
  disabled?: boolean;
  /**
   * Datetime: a moment to come (an expiry). A value changed to one that has passed is said under
   * the field; the one the form opened with is not judged again (a key that expired keeps it).
   */
  future?: boolean;
  /** A warning about the value as typed, said under the field; the form still submits. */
  warn?(value: string): string | null;
}

/** A form described by field specs; the server's validation message lands on the field it names. */
export function SpecForm({
  fields,
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  fields: FieldSpec[];
  initial: FormValues;
  submitLabel: string;
  onSubmit(values: FormValues): Promise<void>;
  onCancel?(): void;
}) {
  const [values, setValues] = useState<FormValues>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  function set(name: string, v: string | boolean) {
    setValues((s) => ({ ...s, [name]: v }));
    setErrors((e) => {
      if (!e[name]) return e;
      const { [name]: _, ...rest } = e;
      return rest;
    });
  }

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    // A number field holding what is not a number ("5e", "0.05e") has the value '' in the
    // browser, which reads as "not set": for a quota, unlimited. The field knows (badInput).
    const form = e.currentTarget;
    // Every field's declared bounds at once, in the console's words, before anything is sent.
    const found = fields.flatMap((f): [string, string][] => {
      const why =
        fieldProblem(f, values[f.name], holdsBadNumber(form.elements.namedItem(f.name))) ??
        (values[f.name] !== initial[f.name] ? pastProblem(f, values[f.name]) : null);
      return why ? [[f.name, why]] : [];
    });
    if (found.length) {
      setErrors(Object.fromEntries(found));
      setFormError(
        found.length === 1
          ? 'Please correct the highlighted field.'
          : 'Please correct the highlighted fields.',
      );
      return;
    }
    setBusy(true);
    setErrors({});
    setFormError(null);
    try {
      await onSubmit(values);
    } catch (err) {
      const field =
        err instanceof ApiError && err.field
          ? (fields.find((f) => f.name === err.field) ??
            fields.find((f) => f.name.startsWith(`${err.field}_`)))
          : undefined;
      if (field) {
        setErrors({ [field.name]: fieldMessage(errorText(err)) });
        setFormError('Please correct the highlighted field.');
      } else setFormError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form form-grid" onSubmit={submit} noValidate>
      {fields.map((f) =>
        f.type === 'checkbox' ? (
          <div key={f.name} className="field field-check">
            <input
              id={`f-${f.name}`}
              name={f.name}
              type="checkbox"
              checked={values[f.name] === true}
              onChange={(e) => set(f.name, e.target.checked)}
            />
            <label htmlFor={`f-${f.name}`}>{f.label}</label>
          </div>
        ) : (
          <Field
            key={f.name}
            label={f.required ? `${f.label} (required)` : f.label}
            hint={f.hint}
            error={errors[f.name]}
            warning={f.warn?.(String(values[f.name] ?? ''))}
            className={f.wide || f.type === 'textarea' ? 'span-2' : undefined}
          >
            {(p) => {
              const common = {
                ...p,
                name: f.name,
                value: String(values[f.name] ?? ''),
                placeholder: f.placeholder,
                autoComplete: f.autoComplete,
                disabled: f.disabled,
              };
              if (f.type === 'textarea')
                return <textarea {...common} rows={4} onChange={(e) => set(f.name, e.target.value)} />;
              if (f.type === 'select')
                return (
                  <select {...common} onChange={(e) => set(f.name, e.target.value)}>
                    {(f.options ?? []).map(([v, l]) => (
                      <option key={v} value={v}>
                        {l}
                      </option>
                    ))}
                  </select>
                );
              return (
                <input
                  {...common}
                  type={f.type === 'datetime' ? 'datetime-local' : (f.type ?? 'text')}
                  step={f.step}
                  min={f.min}
                  max={f.max}
                  onChange={(e) => set(f.name, e.target.value)}
                />
              );
            }}
          </Field>
        ),
      )}
      <div className="span-2" aria-live="assertive">
        <ErrorBox error={formError} />
      </div>
      <div className="form-actions span-2">
        {onCancel && (
          <button type="button" className="btn" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </button>
      </div>
    </form>
  );
}

/**
 * Why a field's value cannot be sent, or null: missing when required, not a number (`badNumber`:
 * the browser's field holds what is not one), or outside the bounds it declares. A disabled field
 * is not the user's to correct.
 */
export function fieldProblem(
  f: FieldSpec,
  value: string | boolean | undefined,
  badNumber = false,
): string | null {
  if (f.disabled || f.type === 'checkbox' || f.type === 'select') return null;
  if (badNumber) return NOT_A_NUMBER;
  const text = typeof value === 'string' ? value : '';
  if (!text.trim()) return f.required ? `${f.label} is required.` : null;
  if (f.type === 'number') return numberRuleProblem(Number(text.trim()), f);
  return textRuleProblem(f.type === 'password' ? text : text.trim(), f);
}

/**
 * Why a `future` datetime cannot be sent: it has passed (the server's 400 said "must be in the
 * future (unix seconds), or null for never", in the API's words).
 */
function pastProblem(f: FieldSpec, value: string | boolean | undefined): string | null {
  if (!f.future || f.disabled || typeof value !== 'string') return null;
  const at = toUnix(value.trim());
  return at !== null && at * 1000 <= Date.now() ? 'Must be in the future, or empty for never.' : null;
}

/** Reads optional numbers from form text: "" means "not set" (null). */
export function numOrNull(v: string | boolean | undefined): number | null {
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

export function str(v: string | boolean | undefined): string {
  return typeof v === 'string' ? v.trim() : '';
}
