//! The error context (serde_derive's `Ctxt`): every error found while reading and
//! checking the input, reported together; and `Attr`, one attribute's value.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;
use syn::Error;

/// Collects errors so that all of them are reported together.
///
/// It must be consumed with `check`: dropping it unchecked panics, so an error
/// cannot be lost on the way to the output.
pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error pointing at `obj`'s tokens.
    pub fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        // `into_token_stream` keeps one copy of `Error::new_spanned` per message type.
        self.syn_error(Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// An error already made, such as a parse error.
    pub fn syn_error(&self, error: Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("the context was checked already")
            .push(error);
    }

    /// All the errors, combined in the order they were found.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("the context was checked already")
            .into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

/// One `#[agent_message(name = …)]` value. A repeat is reported once, at the
/// second occurrence; the first value is kept.
pub struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<T>,
    repeated: bool,
}

impl<'c, T> Attr<'c, T> {
    pub fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr {
            cx,
            name,
            value: None,
            repeated: false,
        }
    }

    /// Records `value`, written at `obj`.
    pub fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_none() {
            self.value = Some(value);
        } else if !self.repeated {
            self.repeated = true;
            self.cx
                .error_spanned_by(obj, format!("duplicate #[agent_message({})]", self.name));
        }
    }

    pub fn get(self) -> Option<T> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::{Attr, Ctxt};

    #[test]
    fn a_repeat_is_reported_once_at_the_second_occurrence() {
        let cx = Ctxt::new();
        let idents: Vec<syn::Ident> = ["kind", "kind", "kind"]
            .iter()
            .map(|name| syn::Ident::new(name, proc_macro2::Span::call_site()))
            .collect();
        let mut kind = Attr::none(&cx, "kind");
        for (value, ident) in idents.iter().enumerate() {
            kind.set(ident, value);
        }
        assert_eq!(kind.get(), Some(0));
        let errors: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|error| error.to_string())
            .collect();
        assert_eq!(errors, ["duplicate #[agent_message(kind)]"]);
    }

    #[test]
    fn errors_are_combined_in_order() {
        let cx = Ctxt::new();
        assert!(Ctxt::new().check().is_ok());
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "second"));
        let messages: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
    }
}
