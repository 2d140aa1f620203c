import { useId } from 'react';

export interface Bar {
  /** Unique per chart (the bucket). */
  id: string;
  label: string;
  /** One value per series, stacked left to right. */
  values: number[];
}

/** Horizontal stacked bars in plain SVG; a data table below serves screen readers. */
export function BarChart({
  title,
  subtitle,
  bars,
  series,
  format,
}: {
  title: string;
  /** Said after the title ("per UTC day"); the bars' accessible name stays the title's. */
  subtitle?: string;
  bars: Bar[];
  series: string[];
  format(n: number): string;
}) {
  const id = useId();
  const max = Math.max(0, ...bars.map((b) => b.values.reduce((s, v) => s + v, 0)));
  return (
    <figure className="chart card" aria-labelledby={`${id}-t`}>
      <figcaption id={`${id}-t`} className="chart-title">
        {subtitle ? `${title} ${subtitle}` : title}
        {series.length > 1 && (
          <span className="legend" aria-hidden="true">
            {series.map((s, i) => (
              <span key={s}>
                <span className={`swatch s${i}`} /> {s}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      {bars.length === 0 ? (
        <p className="meta">No data for this period.</p>
      ) : (
        <>
          {/* Labels stay HTML so they keep their size; each bar is an SVG stretched to its cell. */}
          <div className="bars" role="img" aria-label={`${title} bar chart`}>
            {bars.map((b) => {
              const total = b.values.reduce((s, v) => s + v, 0);
              let x = 0;
              return (
                <div key={b.id} className="bar-row" aria-hidden="true">
                  <span className="bar-label" title={b.label}>
                    {b.label}
                  </span>
                  <svg className="bar-svg" viewBox="0 0 100 10" preserveAspectRatio="none">
                    <rect x={0} y={0} width={100} height={10} className="chart-track" />
                    {b.values.map((v, s) => {
                      const w = max > 0 ? (v / max) * 100 : 0;
                      const rect = (
                        <rect key={series[s]} x={x} y={0} width={w} height={10} className={`chart-bar s${s}`}>
                          <title>{`${b.label} · ${series[s]}: ${format(v)}`}</title>
                        </rect>
                      );
                      x += w;
                      return rect;
                    })}
                  </svg>
                  <span className="bar-value">{format(total)}</span>
                </div>
              );
            })}
          </div>
          <details className="chart-data">
            <summary>Show data</summary>
            <table className="table table-compact">
              <thead>
                <tr>
                  <th scope="col">Bucket</th>
                  {series.map((s) => (
                    <th key={s} scope="col">
                      {s}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {bars.map((b) => (
                  <tr key={b.id}>
                    <th scope="row">{b.label}</th>
                    {b.values.map((v, s) => (
                      <td key={series[s]}>{format(v)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </figure>
  );
}
