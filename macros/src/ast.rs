//! The derive input as the macro sees it: a struct with named fields, each with
//! its parsed attributes, keeping the original syntax for spans.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::ctxt::Ctxt;

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub ident: &'a Ident,
    pub attrs: attr::Container,
    pub fields: Vec<Field<'a>>,
    /// Where generated code finds the crate: `::agentmsg`, or `crate = path`.
    pub krate: TokenStream,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: attr::Field,
}

impl<'a> Container<'a> {
    /// Parses the input, with its errors in `cx`. Not a struct with named fields
    /// gives no container, and that error alone: the attributes are not read.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let named = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named,
                Fields::Unnamed(fields) => {
                    cx.error_spanned_by(
                        fields,
                        "#[derive(AgentMessage)] supports structs with named fields, not tuple structs",
                    );
                    return None;
                }
                Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        "#[derive(AgentMessage)] supports structs with named fields, not unit structs; write `struct Name {}`",
                    );
                    return None;
                }
            },
            Data::Enum(data) => {
                cx.error_spanned_by(
                    data.enum_token,
                    "#[derive(AgentMessage)] supports structs with named fields, not enums; derive it on one struct per kind",
                );
                return None;
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "#[derive(AgentMessage)] supports structs with named fields, not unions",
                );
                return None;
            }
        };
        let attrs = attr::container(cx, &input.attrs);
        let fields = named
            .named
            .iter()
            .filter_map(|field| {
                Some(Field {
                    ident: field.ident.as_ref()?,
                    ty: &field.ty,
                    attrs: attr::field(cx, &field.attrs),
                })
            })
            .collect();
        let krate = match &attrs.krate {
            Some(path) => quote!(#path),
            None => quote!(::agentmsg),
        };
        Some(Container {
            original: input,
            ident: &input.ident,
            attrs,
            fields,
            krate,
        })
    }
}

impl Field<'_> {
    /// The field's name in Rust, without `r#`.
    pub fn name(&self) -> String {
        let name = self.ident.to_string();
        match name.strip_prefix("r#") {
            Some(raw) => raw.to_owned(),
            None => name,
        }
    }
}
