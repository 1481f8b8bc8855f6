//! What the derive emits when the input has errors: the errors, and a stub impl
//! so that uses of the type elsewhere do not cascade into more errors (the
//! thiserror way). The stub is not registered, so nothing decodes into it.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// `krate` is where generated code finds the crate (`Container::krate`).
pub fn expand(input: &DeriveInput, krate: &TokenStream, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    if !input.generics.params.is_empty() {
        return errors;
    }
    let ident = &input.ident;
    let private = crate::private_module();
    quote! {
        #errors
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            use #krate::#private as _am;

            #[automatically_derived]
            impl _am::CustomMessage for #ident {
                const KIND: &'static str = "";
            }
        };
    }
}
