import { type ButtonHTMLAttributes, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { errorText } from '../api';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

export function ErrorBox({ error, onRetry }: { error: string | null | undefined; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="alert alert-error" role="alert">
      <span>{error}</span>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A page's success message. The live region is always in the page, empty and unseen until a
 * message arrives: screen readers announce text put into a region they already know, and often
 * miss a region inserted with its text. Filled, it takes focus after a confirmed action (Confirm).
 */
export function Notice({ children }: { children: ReactNode }) {
  const filled = !!children;
  return (
    <div
      className={filled ? 'notice alert alert-ok' : 'notice sr-live'}
      role="status"
      aria-live="polite"
      tabIndex={filled ? -1 : undefined}
    >
      {children}
    </div>
  );
}

/**
 * Where focus goes once a confirmed action closed its dialog: the page's notice saying what was
 * done, else the page's heading, else the main region. The dialog hands focus back to the button
 * that opened it, which is often the row just deleted: left there, focus fell to <body>.
 */
function focusAfterConfirm() {
  const main = document.getElementById('main');
  if (!main) return;
  const target =
    main.querySelector<HTMLElement>('.notice.alert') ?? main.querySelector<HTMLElement>('h1') ?? main;
  if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
  target.focus();
}

/**
 * A table in its scrolling box: on a narrow screen a wide table scrolls sideways inside it.
 * Keyboard users scroll it once focused, so it is in the tab order, and a region named by the
 * table's caption (read to screen readers, not shown). A shadow at an edge says there is more
 * that way (styles.css). `children`: the table's head and body.
 */
export function TableWrap({
  caption,
  compact,
  busy,
  children,
}: {
  caption: string;
  compact?: boolean;
  busy?: boolean;
  children: ReactNode;
}) {
  return (
    <section
      className={`table-wrap${busy ? ' is-busy' : ''}`}
      aria-label={caption}
      aria-busy={busy}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling box takes focus for the keyboard to scroll it
      tabIndex={0}
    >
      <table className={compact ? 'table table-compact' : 'table'}>
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </section>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children && <div className="empty-body">{children}</div>}
    </div>
  );
}

export function Pager({
  page,
  pageSize,
  total,
  onPage,
}: {
  page: number;
  pageSize: number;
  total: number;
  onPage(p: number): void;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (total <= pageSize && page === 0) return null;
  if (page >= pages) {
    // A page past the end (an old link, the last row of the last page deleted): say so and
    // offer the last page rather than "Page 6 of 2".
    return (
      <nav className="pager" aria-label="Pagination">
        <span aria-live="polite">
          There is no page {page + 1}: {total === 0 ? 'nothing to show' : `the last is page ${pages}`}.
        </span>
        <button type="button" className="btn" onClick={() => onPage(pages - 1)}>
          {pages === 1 ? 'Go to the first page' : `Go to page ${pages}`}
        </button>
      </nav>
    );
  }
  return (
    <nav className="pager" aria-label="Pagination">
      <button type="button" className="btn" disabled={page <= 0} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <span aria-live="polite">
        Page {page + 1} of {pages}
      </span>
      <button type="button" className="btn" disabled={page + 1 >= pages} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

interface FieldProps {
  label: string;
  /** The control's id, when the page needs to reach it; otherwise one is made up. */
  id?: string;
  error?: string | null;
  /** Said under the field when something may be wrong but is not refused (an error hides it). */
  warning?: string | null;
  hint?: string;
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode;
  className?: string;
}

/** A labelled control with its hint and its server-side error tied by aria-describedby. */
export function Field({ label, id: given, error, warning, hint, children, className }: FieldProps) {
  const made = useId();
  const id = given ?? made;
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = error ? `${id}-err` : undefined;
  const warnId = warning && !error ? `${id}-warn` : undefined;
  const describedBy = [hintId, errId, warnId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': !!error, 'aria-describedby': describedBy })}
      {hint && (
        <small id={hintId} className="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={errId} className="field-error" role="alert">
          {error}
        </small>
      )}
      {warnId && (
        <small id={warnId} className="field-warn" role="status">
          {warning}
        </small>
      )}
    </div>
  );
}

/** The controls a dialog starts on: its first field, when it has one. */
const FIRST_FIELD = '.modal-body :is(input, select, textarea):not([disabled]):not([type="hidden"])';

/**
 * A modal built on <dialog>: focus is trapped by the browser and Escape closes it. It opens on
 * its first field (showModal() focuses the first focusable element, the ✕ of the header), and
 * again when its title changes while open (a form turned into another one).
 */
export function Modal({
  title,
  open,
  onClose,
  children,
  wide,
}: {
  title: string;
  open: boolean;
  onClose(): void;
  children: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new title means new content, which starts on its first field
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open) {
      if (!d.open) d.showModal();
      d.querySelector<HTMLElement>(FIRST_FIELD)?.focus();
    } else if (d.open) d.close();
  }, [open, title]);
  return (
    <dialog
      ref={ref}
      className={`modal${wide ? ' modal-wide' : ''}`}
      aria-labelledby={titleId}
      onClose={onClose}
    >
      {open && (
        <>
          <header className="modal-head">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="btn btn-ghost" aria-label="Close" onClick={onClose}>
              ✕
            </button>
          </header>
          <div className="modal-body">{children}</div>
        </>
      )}
    </dialog>
  );
}

/**
 * A confirmation dialog for a destructive call. `onConfirm` runs once at a time (a double click
 * sends one request) and its error is shown in the dialog; each opening starts without the last
 * one's error. It closes itself only through the page (on success the page clears `open`).
 */
export function Confirm({
  open,
  title,
  message,
  confirmLabel = 'Delete',
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  message: ReactNode;
  confirmLabel?: string;
  onConfirm(): Promise<unknown>;
  onCancel(): void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = useRef(false);
  const confirmed = useRef(false);
  useEffect(() => {
    if (open) {
      setError(null);
      confirmed.current = false;
      return;
    }
    // Closed: after a confirmed action focus goes to what the page said (see focusAfterConfirm);
    // after Cancel or Escape the dialog returns it to its opener. Looked at once the call's
    // continuation has run, which may come after the page's re-render that closed the dialog.
    const t = setTimeout(() => {
      if (!confirmed.current) return;
      confirmed.current = false;
      focusAfterConfirm();
    }, 0);
    return () => clearTimeout(t);
  }, [open]);
  async function confirm() {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      confirmed.current = true;
    } catch (e) {
      setError(errorText(e));
    } finally {
      running.current = false;
      setBusy(false);
    }
  }
  return (
    <Modal title={title} open={open} onClose={onCancel}>
      <p>{message}</p>
      <ErrorBox error={error} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="btn btn-danger" disabled={busy} onClick={confirm}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

/**
 * A table row's action: a small button showing its verb, named for assistive technology (and the
 * tests) by the verb and the row's name, `Edit Foo`, so each row's buttons are told apart.
 */
export function RowAction({
  verb,
  of,
  danger,
  ...rest
}: { verb: string; of: string; danger?: boolean } & Omit<
  ButtonHTMLAttributes<HTMLButtonElement>,
  'type' | 'className' | 'children' | 'aria-label'
>) {
  return (
    <button
      type="button"
      className={danger ? 'btn btn-small btn-danger' : 'btn btn-small'}
      aria-label={`${verb} ${of}`}
      {...rest}
    >
      {verb}
    </button>
  );
}

export function StatusBadge({ status, labels }: { status: number; labels?: Record<number, string> }) {
  const names: Record<number, string> = labels ?? {
    1: 'Enabled',
    2: 'Disabled',
    3: 'Expired',
    4: 'Exhausted',
  };
  const tone = status === 1 ? 'ok' : status === 2 ? 'muted' : 'warn';
  return <span className={`badge badge-${tone}`}>{names[status] ?? `Status ${status}`}</span>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const live = useRef<HTMLSpanElement>(null);
  async function copy() {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = false;
    }
    if (live.current) live.current.textContent = ok ? 'Copied.' : 'Copy failed: select the text and copy it.';
  }
  return (
    <>
      <button type="button" className="btn btn-small" onClick={copy}>
        {label}
      </button>
      <span ref={live} className="sr-live" aria-live="polite" />
    </>
  );
}
