//! What a person's agents used, summed by day, week, month or session over
//! their logs (Claude Code, Codex, pi, agentmsg transcripts), as
//! [ccusage](https://github.com/ryoppippi/ccusage) reports it, with what
//! only agentmsg knows beside (tool calls and errors, cache hit rate, the
//! replies no price is known for).
//!
//! [`Report::build`] reads the logs in parallel, each once, keeping per
//! group the sums only (memory holds the groups, never the logs);
//! [`Report::to_json`] writes ccusage's JSON field names for the same view,
//! so scripts built on ccusage read it unchanged; [`Report::to_text`] is
//! the table a person reads.
//!
//! ```no_run
//! # extern crate agentmsg_runtime as agentmsg;
//! # use agentmsg::usage_report::{logs, Grouping, Options, Report};
//! let files = logs::default_roots()
//!     .iter()
//!     .flat_map(|root| logs::find_logs(root).unwrap_or_default())
//!     .collect::<Vec<_>>();
//! let report = Report::build(&files, &Options::new(Grouping::Daily)).unwrap();
//! println!("{}", report.to_text());
//! ```

pub mod logs;
pub mod stores;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde_json::{json, Map, Value};

use logs::{Agent, LogFile, Reply};

/// How the report groups replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// By day (`date`, `YYYY-MM-DD`).
    Daily,
    /// By week starting on Sunday (`week`, its first day).
    Weekly,
    /// By month (`month`, `YYYY-MM`).
    Monthly,
    /// By session (`sessionId`).
    Session,
}

impl Grouping {
    /// The JSON key of the rows (`daily`, `weekly`, `monthly`, `sessions`)
    /// and of each row's group (`date`, `week`, `month`, `sessionId`), as
    /// ccusage writes them.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Self::Daily => ("daily", "date"),
            Self::Weekly => ("weekly", "week"),
            Self::Monthly => ("monthly", "month"),
            Self::Session => ("sessions", "sessionId"),
        }
    }
}

/// What a report counts and how it groups it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The grouping.
    pub grouping: Grouping,
    /// The first day counted (in `timezone`), inclusive.
    pub since: Option<Date>,
    /// The last day counted (in `timezone`), inclusive.
    pub until: Option<Date>,
    /// The time zone days are told in (the system's by default).
    pub timezone: TimeZone,
    /// How many logs are read at once (at least 1).
    pub threads: usize,
}

impl Options {
    /// Options of `grouping`: every day, the system's time zone, a thread
    /// per core.
    pub fn new(grouping: Grouping) -> Self {
        Self {
            grouping,
            since: None,
            until: None,
            timezone: TimeZone::system(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A date that is no `YYYY-MM-DD` (or `YYYYMMDD`).
    #[error("not a date (YYYY-MM-DD): {0}")]
    Date(String),
    /// A time zone the system does not know.
    #[error("unknown time zone `{0}`: {1}")]
    TimeZone(String, String),
    /// A log that could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The log.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A store whose sessions could not be read.
    #[error("{address}: {source}")]
    Store {
        /// The store's address (a PostgreSQL password left out).
        address: String,
        /// Why.
        #[source]
        source: crate::store::StoreError,
    },
}

/// A `YYYY-MM-DD` (or `YYYYMMDD`) date.
pub fn parse_date(text: &str) -> Result<Date, ReportError> {
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    let bad = || ReportError::Date(text.to_owned());
    if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n = |range: std::ops::Range<usize>| digits[range].parse::<i16>().map_err(|_| bad());
    Date::new(n(0..4)?, n(4..6)? as i8, n(6..8)? as i8).map_err(|_| bad())
}

/// The time zone named `name` (an IANA name such as `Europe/Paris`, or `UTC`).
pub fn time_zone(name: &str) -> Result<TimeZone, ReportError> {
    TimeZone::get(name).map_err(|e| ReportError::TimeZone(name.to_owned(), e.to_string()))
}

/// Sums of one model within a group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSums {
    /// Input tokens not read from the cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens written to the cache.
    pub cache_creation: u64,
    /// The part of them written to the cache kept one hour.
    pub cache_creation_1h: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// What the priced replies cost.
    pub cost: f64,
    /// Replies that used tokens and have no known price.
    pub unpriced: u64,
    /// Replies.
    pub replies: u64,
}

impl ModelSums {
    fn add(&mut self, reply: &Reply) {
        let u = &reply.usage;
        self.input += u.input;
        self.output += u.output;
        self.cache_creation += u.cache_write;
        self.cache_creation_1h += u.cache_write_1h;
        self.cache_read += u.cache_read;
        self.replies += 1;
        match u.cost {
            Some(cost) => self.cost += cost.total,
            None if u.total() > 0 => self.unpriced += 1,
            None => {}
        }
    }

    fn merge(&mut self, other: &ModelSums) {
        self.input += other.input;
        self.output += other.output;
        self.cache_creation += other.cache_creation;
        self.cache_creation_1h += other.cache_creation_1h;
        self.cache_read += other.cache_read;
        self.cost += other.cost;
        self.unpriced += other.unpriced;
        self.replies += other.replies;
    }

    /// Every token.
    pub fn total_tokens(&self) -> u64 {
        self.input + self.output + self.cache_creation + self.cache_read
    }

    /// The cost, `None` when a reply has no known price.
    pub fn total_cost(&self) -> Option<f64> {
        (self.unpriced == 0).then_some(self.cost)
    }

    /// The share of prompt tokens read from the cache.
    pub fn cache_hit_rate(&self) -> f64 {
        let prompt = self.input + self.cache_read + self.cache_creation;
        if prompt == 0 {
            0.0
        } else {
            self.cache_read as f64 / prompt as f64
        }
    }
}

/// One row of the report: a day, week, month or session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The group (`2026-01-02`, `2026-01`, a session id).
    pub group: String,
    /// All models together.
    pub sums: ModelSums,
    /// By model.
    pub models: BTreeMap<String, ModelSums>,
    /// Tool calls made.
    pub tool_calls: u64,
    /// Tool results that were errors.
    pub tool_errors: u64,
    /// The agents whose logs it holds.
    pub agents: BTreeSet<Agent>,
    /// The first and last reply's time, Unix milliseconds.
    pub first: i64,
    /// The last reply's time.
    pub last: i64,
    /// The project (for a session).
    pub project: String,
}

impl Row {
    fn add(&mut self, reply: &Reply, agent: Agent) {
        self.sums.add(reply);
        let model = if reply.model.is_empty() {
            "(unknown)"
        } else {
            reply.model.as_str()
        };
        self.models.entry(model.to_owned()).or_default().add(reply);
        self.tool_calls += reply.tool_calls;
        self.agents.insert(agent);
        self.seen(reply.timestamp);
    }

    fn seen(&mut self, at: i64) {
        if at > 0 {
            self.first = if self.first == 0 {
                at
            } else {
                self.first.min(at)
            };
        }
        self.last = self.last.max(at);
    }

    fn merge(&mut self, other: Row) {
        self.sums.merge(&other.sums);
        for (model, sums) in &other.models {
            self.models.entry(model.clone()).or_default().merge(sums);
        }
        self.tool_calls += other.tool_calls;
        self.tool_errors += other.tool_errors;
        self.agents.extend(other.agents);
        if other.first > 0 {
            self.seen(other.first);
        }
        self.last = self.last.max(other.last);
        if self.project.is_empty() {
            self.project = other.project;
        }
    }
}

/// A usage report: its rows in order, and their totals.
#[derive(Debug, Clone)]
pub struct Report {
    /// The grouping.
    pub grouping: Grouping,
    /// The rows, by group.
    pub rows: Vec<Row>,
    /// All rows together.
    pub totals: Row,
    /// Logs read.
    pub logs: usize,
    /// Lines of them that could not be read.
    pub unread_lines: usize,
    /// Replies without a time, which no day, week or month holds (a
    /// session does).
    pub undated: usize,
}

impl Report {
    /// Reads `files` (in parallel, each once) and sums their replies by
    /// `options`' grouping.
    pub fn build(files: &[LogFile], options: &Options) -> Result<Report, ReportError> {
        Self::build_with(files, Vec::new(), options)
    }

    /// [`build`](Self::build) over `files` and logs already read (a
    /// store's sessions, from [`stores::read_store`]), each counted as its
    /// [`LogFile`] says.
    pub fn build_with(
        files: &[LogFile],
        read: Vec<(LogFile, logs::LogContents)>,
        options: &Options,
    ) -> Result<Report, ReportError> {
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<ReportError>> = Mutex::new(None);
        let threads = options.threads.clamp(1, files.len().max(1));
        let partials: Vec<(BTreeMap<String, Row>, usize, usize)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut rows = BTreeMap::new();
                        let (mut unread, mut undated) = (0, 0);
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(file) = files.get(i) else { break };
                            match logs::read_log(&file.path) {
                                Ok(contents) => {
                                    unread += contents.unread_lines;
                                    undated += add_log(&mut rows, file, contents, options);
                                }
                                Err(source) => {
                                    let mut failed =
                                        failed.lock().unwrap_or_else(|e| e.into_inner());
                                    failed.get_or_insert(ReportError::Read {
                                        path: file.path.clone(),
                                        source,
                                    });
                                    next.store(files.len(), Ordering::Relaxed);
                                }
                            }
                        }
                        (rows, unread, undated)
                    })
                })
                .collect();
            workers.into_iter().filter_map(|w| w.join().ok()).collect()
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        let logs_read = files.len() + read.len();
        let mut partials = partials;
        let mut stored = BTreeMap::new();
        let (mut unread, mut no_time) = (0, 0);
        for (file, contents) in read {
            unread += contents.unread_lines;
            no_time += add_log(&mut stored, &file, contents, options);
        }
        partials.push((stored, unread, no_time));
        let mut rows: BTreeMap<String, Row> = BTreeMap::new();
        let (mut unread_lines, mut undated) = (0, 0);
        for (partial, unread, no_time) in partials {
            unread_lines += unread;
            undated += no_time;
            for (group, row) in partial {
                match rows.get_mut(&group) {
                    Some(known) => known.merge(row),
                    None => {
                        rows.insert(group, row);
                    }
                }
            }
        }
        let mut rows: Vec<Row> = rows.into_values().collect();
        if options.grouping == Grouping::Session {
            // As ccusage orders sessions: by their last activity.
            rows.sort_by(|a, b| a.last.cmp(&b.last).then_with(|| a.group.cmp(&b.group)));
        }
        let mut totals = Row::default();
        for row in &rows {
            totals.merge(row.clone());
        }
        Ok(Report {
            grouping: options.grouping,
            rows,
            totals,
            logs: logs_read,
            unread_lines,
            undated,
        })
    }

    /// The report as ccusage's JSON for the same view (`{"daily": [...],
    /// "totals": {...}}`, `"sessions"` with `sessionId`, …), with agentmsg's
    /// own fields beside: `totalCost` is `null` when a reply's price is
    /// unknown (`pricedCost` is then what the others cost).
    pub fn to_json(&self) -> Value {
        let (rows_key, group_key) = self.grouping.keys();
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let mut object = sums_json(&row.sums);
                object.insert(group_key.to_owned(), json!(row.group));
                let used: Vec<&String> = row
                    .models
                    .iter()
                    .filter(|(_, m)| m.total_tokens() > 0)
                    .map(|(name, _)| name)
                    .collect();
                object.insert("modelsUsed".to_owned(), json!(used));
                let breakdowns: Vec<Value> = row
                    .models
                    .iter()
                    .filter(|(_, m)| m.total_tokens() > 0)
                    .map(|(name, m)| {
                        json!({
                            "modelName": name,
                            "inputTokens": m.input,
                            "outputTokens": m.output,
                            "cacheCreationTokens": m.cache_creation,
                            "cacheReadTokens": m.cache_read,
                            "cost": m.total_cost(),
                            "unpricedReplies": m.unpriced,
                        })
                    })
                    .collect();
                object.insert("modelBreakdowns".to_owned(), json!(breakdowns));
                object.insert("toolCalls".to_owned(), json!(row.tool_calls));
                object.insert("toolErrors".to_owned(), json!(row.tool_errors));
                object.insert(
                    "agents".to_owned(),
                    json!(row.agents.iter().map(|a| a.as_str()).collect::<Vec<_>>()),
                );
                if self.grouping == Grouping::Session {
                    object.insert(
                        "firstActivity".to_owned(),
                        json!(crate::time::format_iso8601(row.first)),
                    );
                    object.insert(
                        "lastActivity".to_owned(),
                        json!(crate::time::format_iso8601(row.last)),
                    );
                    object.insert("projectPath".to_owned(), json!(row.project));
                }
                Value::Object(object)
            })
            .collect();
        let mut totals = sums_json(&self.totals.sums);
        totals.insert("toolCalls".to_owned(), json!(self.totals.tool_calls));
        totals.insert("toolErrors".to_owned(), json!(self.totals.tool_errors));
        json!({ rows_key: rows, "totals": totals })
    }

    /// The report as a table a person reads: a row per group with its
    /// models, tokens, cost, tool calls and errors and cache hit rate, the
    /// totals, and the replies no price is known for, by model.
    pub fn to_text(&self) -> String {
        let header = [
            match self.grouping {
                Grouping::Daily => "Date",
                Grouping::Weekly => "Week",
                Grouping::Monthly => "Month",
                Grouping::Session => "Session",
            },
            "Models",
            "Input",
            "Output",
            "Cache write",
            "Cache read",
            "Total tokens",
            "Cost (USD)",
            "Tool calls",
            "Tool errors",
            "Cache hits",
        ];
        let cells = |row: &Row, group: &str| -> Vec<String> {
            let s = &row.sums;
            let models: Vec<&str> = row
                .models
                .iter()
                .filter(|(_, m)| m.total_tokens() > 0)
                .map(|(name, _)| name.as_str())
                .collect();
            vec![
                group.to_owned(),
                models.join(", "),
                grouped(s.input),
                grouped(s.output),
                grouped(s.cache_creation),
                grouped(s.cache_read),
                grouped(s.total_tokens()),
                match s.total_cost() {
                    Some(cost) => format!("${cost:.2}"),
                    None => format!("≥ ${:.2} ({} unpriced)", s.cost, s.unpriced),
                },
                grouped(row.tool_calls),
                grouped(row.tool_errors),
                format!("{:.1}%", s.cache_hit_rate() * 100.0),
            ]
        };
        let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
        table.extend(self.rows.iter().map(|row| cells(row, &row.group)));
        table.push(cells(&self.totals, "Total"));
        let widths: Vec<usize> = (0..header.len())
            .map(|c| {
                table
                    .iter()
                    .map(|r| r[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let last = table.len() - 1;
        for (i, row) in table.iter().enumerate() {
            if i == last || i == 1 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let _ = writeln!(out, "{}", rule.join("  "));
            }
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, w))| {
                    let pad = w - cell.chars().count();
                    if c < 2 {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        let unpriced: Vec<String> = self
            .totals
            .models
            .iter()
            .filter(|(_, m)| m.unpriced > 0)
            .map(|(name, m)| format!("{name} ({})", m.unpriced))
            .collect();
        if !unpriced.is_empty() {
            let _ = writeln!(
                out,
                "\nReplies without a known price, by model: {}",
                unpriced.join(", ")
            );
        }
        if self.unread_lines > 0 {
            let _ = writeln!(
                out,
                "\n{} lines of the logs could not be read and are not counted",
                self.unread_lines
            );
        }
        if self.undated > 0 {
            let _ = writeln!(
                out,
                "\n{} replies have no time, so no day holds them (--session counts them)",
                self.undated
            );
        }
        let _ = writeln!(out, "\n{} logs read", self.logs);
        out
    }
}

/// A number with thousands separated by commas.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The token and cost fields of ccusage's rows and totals.
fn sums_json(s: &ModelSums) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("inputTokens".to_owned(), json!(s.input));
    object.insert("outputTokens".to_owned(), json!(s.output));
    object.insert("cacheCreationTokens".to_owned(), json!(s.cache_creation));
    object.insert("cacheReadTokens".to_owned(), json!(s.cache_read));
    object.insert("totalTokens".to_owned(), json!(s.total_tokens()));
    object.insert("totalCost".to_owned(), json!(s.total_cost()));
    object.insert("pricedCost".to_owned(), json!(s.cost));
    object.insert("unpricedReplies".to_owned(), json!(s.unpriced));
    object.insert("cacheHitRate".to_owned(), json!(s.cache_hit_rate()));
    object
}

/// The day of `at` (Unix milliseconds) in `tz`.
fn day_of(at: i64, tz: &TimeZone) -> Option<Date> {
    let timestamp = jiff::Timestamp::from_millisecond(at).ok()?;
    Some(timestamp.to_zoned(tz.clone()).date())
}

/// The group of a reply of `file` at `at`, unless `options` leave it out.
fn group_of(at: i64, file: &LogFile, options: &Options) -> Option<String> {
    let day = day_of(at, &options.timezone);
    if let Some(day) = day {
        if options.since.is_some_and(|since| day < since)
            || options.until.is_some_and(|until| day > until)
        {
            return None;
        }
    } else if options.since.is_some() || options.until.is_some() {
        return None;
    }
    Some(match options.grouping {
        Grouping::Session => file.session.clone(),
        grouping => {
            let day = day?;
            match grouping {
                Grouping::Daily => day.to_string(),
                Grouping::Monthly => format!("{:04}-{:02}", day.year(), day.month()),
                _ => {
                    let back = i64::from(day.weekday().to_sunday_zero_offset());
                    day.checked_sub(jiff::Span::new().days(back))
                        .unwrap_or(day)
                        .to_string()
                }
            }
        }
    })
}

/// Adds what the log `file` holds to `rows`; the replies without a time
/// left out of a dated view are counted.
fn add_log(
    rows: &mut BTreeMap<String, Row>,
    file: &LogFile,
    contents: logs::LogContents,
    options: &Options,
) -> usize {
    let agent = contents.agent.unwrap_or(Agent::Agentmsg);
    let mut undated = 0;
    for reply in &contents.replies {
        if reply.timestamp <= 0 && options.grouping != Grouping::Session {
            undated += 1;
            continue;
        }
        if let Some(group) = group_of(reply.timestamp, file, options) {
            row_of(rows, group, file).add(reply, agent);
        }
    }
    for &at in &contents.tool_errors {
        if let Some(group) = group_of(at, file, options) {
            row_of(rows, group, file).tool_errors += 1;
        }
    }
    undated
}

/// The row of `group`, made when it is new.
fn row_of<'a>(rows: &'a mut BTreeMap<String, Row>, group: String, file: &LogFile) -> &'a mut Row {
    let row = rows.entry(group.clone()).or_insert_with(|| Row {
        group,
        ..Row::default()
    });
    if row.project.is_empty() {
        row.project.clone_from(&file.project);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_in_both_forms() {
        assert_eq!(
            parse_date("2026-01-02").unwrap(),
            jiff::civil::date(2026, 1, 2)
        );
        assert_eq!(
            parse_date("20260102").unwrap(),
            jiff::civil::date(2026, 1, 2)
        );
        assert!(parse_date("2026-13-01").is_err());
        assert!(parse_date("yesterday").is_err());
    }

    #[test]
    fn weeks_start_on_sunday_and_months_are_year_month() {
        let file = LogFile::at("p/s.jsonl".into());
        let mut options = Options::new(Grouping::Weekly);
        options.timezone = TimeZone::UTC;
        // 2025-07-01T12:00:00Z, a Tuesday.
        let at = 1_751_371_200_000;
        assert_eq!(group_of(at, &file, &options).unwrap(), "2025-06-29");
        options.grouping = Grouping::Monthly;
        assert_eq!(group_of(at, &file, &options).unwrap(), "2025-07");
        options.grouping = Grouping::Daily;
        options.since = Some(jiff::civil::date(2025, 7, 2));
        assert_eq!(group_of(at, &file, &options), None);
    }

    #[test]
    fn a_subagents_log_belongs_to_its_session() {
        let file = LogFile::at("projects/-p/abc/subagents/agent-x.jsonl".into());
        assert_eq!(
            (file.session.as_str(), file.project.as_str()),
            ("abc", "-p")
        );
        let file = LogFile::at("projects/-p/agent-x.jsonl".into());
        assert_eq!(
            (file.session.as_str(), file.project.as_str()),
            ("agent-x", "-p")
        );
    }
}
