/* SPDX-License-Identifier: MIT */
/*
 * What a PostgreSQL clone needs to know of a statement's text to answer
 * it: its first keyword (the command tag, whether it returns rows, what it
 * does to the transaction) and, for a SELECT, how many columns. The tag
 * comes from the client's own words; nothing here is executed.
 */
#include "rt_int.h"

#include <string.h>
#include <strings.h>

/* Index 0 is a word not in the table: its tag is the word itself. */
static const struct rt_pg_kw kws[] = {
	{ "", "", 0, RT_PG_TXN_KEEP },
	{ "SELECT", "SELECT 1", 1, RT_PG_TXN_KEEP },
	{ "VALUES", "SELECT 1", 1, RT_PG_TXN_KEEP },
	{ "TABLE", "SELECT 1", 1, RT_PG_TXN_KEEP },
	{ "WITH", "SELECT 1", 1, RT_PG_TXN_KEEP },
	{ "SHOW", "SHOW", 1, RT_PG_TXN_KEEP },
	{ "INSERT", "INSERT 0 1", 0, RT_PG_TXN_KEEP },
	{ "UPDATE", "UPDATE 1", 0, RT_PG_TXN_KEEP },
	{ "DELETE", "DELETE 1", 0, RT_PG_TXN_KEEP },
	{ "BEGIN", "BEGIN", 0, RT_PG_TXN_OPEN },
	{ "START", "START TRANSACTION", 0, RT_PG_TXN_OPEN },
	{ "COMMIT", "COMMIT", 0, RT_PG_TXN_CLOSE },
	{ "END", "COMMIT", 0, RT_PG_TXN_CLOSE },
	{ "ROLLBACK", "ROLLBACK", 0, RT_PG_TXN_CLOSE },
	{ "ABORT", "ROLLBACK", 0, RT_PG_TXN_CLOSE },
	{ "TRUNCATE", "TRUNCATE TABLE", 0, RT_PG_TXN_KEEP },
};

const struct rt_pg_kw *rt_pg_kw(unsigned idx)
{
	return &kws[idx < sizeof(kws) / sizeof(kws[0]) ? idx : 0];
}

static bool space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '(';
}

static bool letter(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

/* Skips blanks, opening parentheses and "--" comments. */
static size_t skip(const char *s, size_t n, size_t i)
{
	for (;;) {
		while (i < n && space(s[i]))
			i++;
		if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		return i;
	}
}

/* Columns of a SELECT list: top-level commas before a top-level FROM. */
static unsigned select_columns(const char *s, size_t n)
{
	unsigned cols = 1, depth = 0;
	char quote = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (quote) {
			quote = ch == quote ? 0 : quote;
		} else if (ch == '\'' || ch == '"') {
			quote = ch;
		} else if (ch == '(') {
			depth++;
		} else if (ch == ')') {
			depth -= depth > 0;
		} else if (ch == ',' && !depth) {
			cols += cols < RT_PG_COLS_MAX;
		} else if (!depth && i + 4 <= n && !strncasecmp(s + i, "from", 4) &&
			   (i == 0 || !letter(s[i - 1])) && (i + 4 == n || !letter(s[i + 4]))) {
			break;
		}
	}
	return cols;
}

struct rt_pg_stmt rt_pg_classify(const char *s, size_t n)
{
	struct rt_pg_stmt st = { .kw = 0, .cols = 0 };
	size_t i = skip(s, n, 0), w = i;

	while (w < n && letter(s[w]) && w - i < RT_PG_WORD_MAX)
		w++;
	st.word = s + i;
	st.wordlen = w - i;
	if (!st.wordlen) {
		st.empty = true;
		return st;
	}
	for (unsigned k = 1; k < sizeof(kws) / sizeof(kws[0]); k++) {
		if (strlen(kws[k].word) == st.wordlen && !strncasecmp(kws[k].word, st.word, st.wordlen)) {
			st.kw = k;
			break;
		}
	}
	if (kws[st.kw].rows)
		st.cols = !strcmp(kws[st.kw].word, "SELECT") ? select_columns(s + w, n - w) : 1;
	return st;
}

/* The statement that starts at s: up to a ';' outside quotes, or the end. */
size_t rt_pg_statement_len(const char *s, size_t n)
{
	char quote = 0;

	for (size_t i = 0; i < n; i++) {
		if (quote)
			quote = s[i] == quote ? 0 : quote;
		else if (s[i] == '\'' || s[i] == '"')
			quote = s[i];
		else if (s[i] == ';')
			return i;
	}
	return n;
}
