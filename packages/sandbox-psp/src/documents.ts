/** CPF and CNPJ as the API Pix writes them (digits; a CNPJ may be alphanumeric), checked by validation-br, not the gateway's code. */
import { isCNPJ, isCPF } from 'validation-br';

export const isValidCpf = (text: string) => /^\d{11}$/.test(text) && isCPF(text);
export const isValidCnpj = (text: string) => /^[0-9A-Z]{14}$/.test(text) && isCNPJ(text);
