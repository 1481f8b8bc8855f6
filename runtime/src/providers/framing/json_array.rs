//! A JSON array that arrives in pieces (Gemini's `streamGenerateContent`
//! without `alt=sse`): each element is handed on as soon as it is complete.
//! Only the framing is checked here (brackets, strings, commas); each element
//! is parsed by the stream decoder.

use super::{FrameError, FrameErrorKind, DEFAULT_MAX_EVENT};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    Start,
    /// After `[` or `,`: an element or (after `[`) `]` comes next.
    Element { first: bool },
    /// Inside an element.
    Inside,
    /// After an element: `,` or `]`.
    After,
    /// After the closing `]`.
    End,
}

/// Frames a streamed JSON array into its elements.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::JsonArrayParser;
/// let mut parser = JsonArrayParser::new();
/// let mut elements = Vec::new();
/// for chunk in ["[{\"a\":\"]\"}", ",\r\n{\"b\":[1,2]}", "]"] {
///     parser.push(chunk.as_bytes(), |_, e| elements.push(e.to_owned()))?;
/// }
/// parser.finish()?;
/// assert_eq!(elements, ["{\"a\":\"]\"}", "{\"b\":[1,2]}"]);
/// # Ok::<(), agentmsg::providers::FrameError>(())
/// ```
#[derive(Debug)]
pub struct JsonArrayParser {
    state: State,
    element: Vec<u8>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    elements: usize,
    max_event: usize,
    offset: u64,
}

impl Default for JsonArrayParser {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonArrayParser {
    /// A parser with the default size limit of one element (16 MiB).
    pub fn new() -> Self {
        Self::with_max_event(DEFAULT_MAX_EVENT)
    }

    /// A parser that fails on an element longer than `max` bytes.
    pub fn with_max_event(max: usize) -> Self {
        Self {
            state: State::Start,
            element: Vec::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            elements: 0,
            max_event: max,
            offset: 0,
        }
    }

    fn error(&self, kind: FrameErrorKind) -> FrameError {
        FrameError {
            event: self.elements,
            offset: self.offset,
            kind,
        }
    }

    /// Reads one chunk, calling `on_element` with the index and text of each
    /// element it completes.
    ///
    /// # Errors
    /// [`FrameError`] naming the element index: a byte where the array's
    /// framing does not allow it, an element that is not UTF-8, or one over the
    /// size limit.
    pub fn push(
        &mut self,
        chunk: &[u8],
        mut on_element: impl FnMut(usize, &str),
    ) -> Result<(), FrameError> {
        for &byte in chunk {
            self.byte(byte, &mut on_element)?;
            self.offset += 1;
        }
        Ok(())
    }

    fn byte(
        &mut self,
        byte: u8,
        on_element: &mut impl FnMut(usize, &str),
    ) -> Result<(), FrameError> {
        let unexpected = |this: &Self, expected: &'static str| {
            this.error(FrameErrorKind::Syntax {
                found: byte,
                expected,
            })
        };
        match self.state {
            State::Start => match byte {
                b'[' => self.state = State::Element { first: true },
                b if b.is_ascii_whitespace() => {}
                _ => return Err(unexpected(self, "`[`")),
            },
            State::Element { first } => match byte {
                b']' if first => self.state = State::End,
                b'{' | b'[' => {
                    self.state = State::Inside;
                    self.depth = 1;
                    self.element.push(byte);
                }
                b if b.is_ascii_whitespace() => {}
                _ => return Err(unexpected(self, "an object")),
            },
            State::Inside => {
                if self.element.len() >= self.max_event {
                    return Err(self.error(FrameErrorKind::TooLarge {
                        limit: self.max_event,
                    }));
                }
                self.element.push(byte);
                if self.in_string {
                    match (self.escaped, byte) {
                        (true, _) => self.escaped = false,
                        (false, b'\\') => self.escaped = true,
                        (false, b'"') => self.in_string = false,
                        _ => {}
                    }
                    return Ok(());
                }
                match byte {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            let text = std::str::from_utf8(&self.element)
                                .map_err(|_| self.error(FrameErrorKind::Utf8))?;
                            on_element(self.elements, text);
                            self.elements += 1;
                            self.element.clear();
                            self.state = State::After;
                        }
                    }
                    _ => {}
                }
            }
            State::After => match byte {
                b',' => self.state = State::Element { first: false },
                b']' => self.state = State::End,
                b if b.is_ascii_whitespace() => {}
                _ => return Err(unexpected(self, "`,` or `]`")),
            },
            State::End => {
                if !byte.is_ascii_whitespace() {
                    return Err(unexpected(self, "nothing after the closing `]`"));
                }
            }
        }
        Ok(())
    }

    /// Ends the stream.
    ///
    /// # Errors
    /// [`FrameError`] with [`FrameErrorKind::Truncated`] when the array was not
    /// closed.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.state {
            State::End => Ok(()),
            _ => Err(self.error(FrameErrorKind::Truncated)),
        }
    }

    /// How many elements were handed on.
    pub fn elements(&self) -> usize {
        self.elements
    }
}
