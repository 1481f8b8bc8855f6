//! The derive input as the macro sees it: a struct with named fields, each with
//! its parsed attributes, keeping the original syntax for spans.

use syn::{Data, DeriveInput, Error, Fields, Ident, Type};

use crate::attr::{self, Errors};

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub ident: &'a Ident,
    pub attrs: attr::Container,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: attr::Field,
}

impl<'a> Container<'a> {
    /// Parses the input; the shape errors (not a struct with named fields) are
    /// returned at once, attribute errors are collected in `errors`.
    pub fn from_ast(input: &'a DeriveInput, errors: &mut Errors) -> Result<Self, Error> {
        let named = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named,
                Fields::Unnamed(fields) => {
                    return Err(Error::new_spanned(
                        fields,
                        "#[derive(AgentMessage)] supports structs with named fields, not tuple structs",
                    ))
                }
                Fields::Unit => {
                    return Err(Error::new_spanned(
                        &input.ident,
                        "#[derive(AgentMessage)] supports structs with named fields, not unit structs; write `struct Name {}`",
                    ))
                }
            },
            Data::Enum(data) => {
                return Err(Error::new_spanned(
                    data.enum_token,
                    "#[derive(AgentMessage)] supports structs with named fields, not enums; derive it on one struct per kind",
                ))
            }
            Data::Union(data) => {
                return Err(Error::new_spanned(
                    data.union_token,
                    "#[derive(AgentMessage)] supports structs with named fields, not unions",
                ))
            }
        };
        let attrs = attr::container(&input.attrs, errors);
        let fields = named
            .named
            .iter()
            .filter_map(|field| {
                Some(Field {
                    ident: field.ident.as_ref()?,
                    ty: &field.ty,
                    attrs: attr::field(&field.attrs, errors),
                })
            })
            .collect();
        Ok(Container {
            original: input,
            ident: &input.ident,
            attrs,
            fields,
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
