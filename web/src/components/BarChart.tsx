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
  bars,
  series,
  format,
}: {
  title: string;
  bars: Bar[];
  series: string[];
  format(n: number): string;
}) {
  const id = useId();
  const max = Math.max(0, ...bars.map((b) => b.values.reduce((s, v) => s + v, 0)));
  const row = 26;
  const labelW = 150;
  const valueW = 90;
  const chartW = 600;
  const barW = chartW - labelW - valueW;
  const height = bars.length * row + 4;
  return (
    <figure className="chart card" aria-labelledby={`${id}-t`}>
      <figcaption id={`${id}-t`} className="chart-title">
        {title}
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
          <svg viewBox={`0 0 ${chartW} ${height}`} width="100%" role="img" aria-label={`${title} bar chart`}>
            {bars.map((b, i) => {
              const y = i * row + 2;
              const total = b.values.reduce((s, v) => s + v, 0);
              let x = labelW;
              return (
                <g key={b.id}>
                  <text x={labelW - 8} y={y + row / 2 + 4} textAnchor="end" className="chart-label">
                    {b.label.length > 20 ? `${b.label.slice(0, 19)}…` : b.label}
                  </text>
                  <rect x={labelW} y={y + 3} width={barW} height={row - 8} className="chart-track" rx={3} />
                  {b.values.map((v, s) => {
                    const w = max > 0 ? (v / max) * barW : 0;
                    const rect = (
                      <rect
                        key={series[s]}
                        x={x}
                        y={y + 3}
                        width={w}
                        height={row - 8}
                        className={`chart-bar s${s}`}
                        rx={3}
                      >
                        <title>{`${b.label} · ${series[s]}: ${format(v)}`}</title>
                      </rect>
                    );
                    x += w;
                    return rect;
                  })}
                  <text x={labelW + barW + 8} y={y + row / 2 + 4} className="chart-value">
                    {format(total)}
                  </text>
                </g>
              );
            })}
          </svg>
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
