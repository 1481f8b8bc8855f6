//! The generated code. Everything here was parsed and checked before.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

use crate::ast::Container;
use crate::attr::Role;
use crate::ctxt::Ctxt;
use crate::fallback;
use crate::valid::{self, Plan, Projection};

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let Some(cont) = Container::from_ast(&cx, input) else {
        let error = cx.check().expect_err("no container only after an error");
        // A shape error is reported before the attributes are read, so the stub
        // names the crate by its default path.
        return fallback::expand(input, &quote!(::agentmsg), error);
    };
    let plan = valid::check(&cx, &cont);
    match (cx.check(), plan) {
        (Ok(()), Ok(plan)) => expand(&cont, &plan),
        (Err(error), _) => fallback::expand(input, &cont.krate, error),
        (Ok(()), Err(())) => unreachable!("no plan only after an error"),
    }
}

fn expand(cont: &Container, plan: &Plan) -> TokenStream {
    let krate = &cont.krate;
    let ident = cont.ident;
    let kind = plan.kind;
    let aliases = &plan.aliases;
    let version = plan.version;
    let to_llm = projection(&plan.projection);
    let migrate = plan.migrate.map(|path| {
        let call = quote_spanned! {path.span()=>
            _am::run_migration(#path, from, value)
        };
        quote! {
            fn migrate(
                from: u32,
                value: _am::Value,
            ) -> _am::Result<_am::Value, _am::MigrateError> {
                #call
            }
        }
    });
    let timestamp = plan.timestamp.map(|field| {
        let member = field.ident;
        let ty = field.ty;
        let read = quote_spanned! {ty.span()=>
            _am::field_timestamp::<#ty>(&self.#member)
        };
        quote! {
            const TIMESTAMP_FIELD: bool = true;

            fn timestamp(&self) -> _am::Option<u64> {
                #read
            }
        }
    });
    let private = crate::private_module();
    quote! {
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            use #krate::#private as _am;

            #[automatically_derived]
            impl _am::CustomMessage for #ident {
                const KIND: &'static str = #kind;
                const VERSION: u32 = #version;
                const ALIASES: &'static [&'static str] = &[#(#aliases),*];

                fn to_llm(&self) -> _am::Vec<_am::Message> {
                    #to_llm
                }

                #migrate
                #timestamp
            }

            _am::inventory::submit! {
                _am::Registration::new::<#ident>()
            }
        };
    }
}

fn projection(projection: &Projection) -> TokenStream {
    match projection {
        Projection::None => quote!(_am::Vec::new()),
        Projection::With { path } => {
            let project = quote_spanned! {path.span()=>
                let project: fn(&Self) -> _am::Vec<_am::Message> = #path;
            };
            quote! {
                #project
                project(self)
            }
        }
        Projection::Template {
            role,
            template,
            fields,
        } => {
            let args = fields.iter().map(|field| {
                let member = field.ident;
                let ty = field.ty;
                let value = quote_spanned! {ty.span()=>
                    _am::display::<#ty>(&self.#member)
                };
                quote!(#member = #value)
            });
            let text = quote!(_am::format!(#template, #(#args),*));
            let make = match role {
                Role::User => quote!(_am::user_text),
                Role::Assistant => quote!(_am::assistant_text),
                Role::System => quote!(_am::system_text),
            };
            quote!(_am::vec![#make(#text)])
        }
        Projection::Content { role, fields } => {
            let (convert, make) = match role {
                Role::User => (quote!(user_content), quote!(_am::user_message)),
                Role::Assistant => (quote!(assistant_content), quote!(_am::assistant_message)),
                Role::System => (quote!(system_content), quote!(_am::system_message)),
            };
            let blocks = fields.iter().map(|field| {
                let member = field.ident;
                let ty = field.ty;
                quote_spanned! {ty.span()=>
                    _am::#convert::<#ty>(&self.#member)
                }
            });
            quote!(_am::vec![#make(_am::vec![#(#blocks),*])])
        }
    }
}
