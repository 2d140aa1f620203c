import { type FormEvent, useEffect, useState } from 'react';
import { clipChars } from '../format';
import { navigate } from '../router';

/** The longest keyword the catalog searches for, in characters (the server's limit). */
export const MAX_KEYWORD = 100;

export function SearchBox({ initial = '', large }: { initial?: string; large?: boolean }) {
  const [keyword, setKeyword] = useState(initial);
  useEffect(() => setKeyword(initial), [initial]);

  function submit(e: FormEvent) {
    e.preventDefault();
    const k = clipChars(keyword.trim(), MAX_KEYWORD);
    navigate(k ? `/apps?keyword=${encodeURIComponent(k)}` : '/apps');
  }

  return (
    <search className={`search-wrap${large ? ' search-large' : ''}`}>
      <form className="search" onSubmit={submit}>
        <label htmlFor="catalog-search" className="sr-only">
          Search apps
        </label>
        {/* No maxLength: it counts UTF-16 units, so 100 emoji would be cut to 50. */}
        <input
          id="catalog-search"
          type="search"
          placeholder="Search apps by name, tag or author"
          value={keyword}
          onChange={(e) => setKeyword(clipChars(e.target.value, MAX_KEYWORD))}
        />
        <button type="submit" className="btn btn-primary">
          Search
        </button>
      </form>
    </search>
  );
}

export function CategoryChips({ active, onPick }: { active?: string; onPick(c: string): void }) {
  const all = ['', 'development', 'productivity', 'tools', 'entertainment', 'general'];
  return (
    <fieldset className="chips">
      <legend className="sr-only">Categories</legend>
      {all.map((c) => (
        <button
          key={c || 'all'}
          type="button"
          className={`chip${(active ?? '') === c ? ' chip-active' : ''}`}
          aria-pressed={(active ?? '') === c}
          onClick={() => onPick(c)}
        >
          {c ? c[0].toUpperCase() + c.slice(1) : 'All'}
        </button>
      ))}
    </fieldset>
  );
}
